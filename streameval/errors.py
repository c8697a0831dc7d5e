"""Exceptions raised by streameval.

One hierarchy: every error on bad input is a :class:`StreamevalError` (a ``ValueError``), and the
readers', the page-stream loaders' and the command line's errors are among them.

Every rejected call leaves the state it was called on exactly as it was: the checks run before
anything is mutated.

>>> from streameval import Contingency
>>> table = Contingency()
>>> table.update(None, "a")
Traceback (most recent call last):
...
streameval.errors.MissingLabelError: y_true is missing (None); pass a label, or use Contingency(missing="skip") to skip and count such elements
"""

from __future__ import annotations


class StreamevalError(ValueError):
    """Base class of every error streameval raises on bad input."""


class MissingLabelError(StreamevalError):
    """A label is ``None`` or NaN."""


class InvalidLabelError(StreamevalError):
    """A label is not hashable, so it cannot name a cluster."""


class InvalidWeightError(StreamevalError):
    """A multiplicity is not a positive integer (or an integral float such as River's ``1.0``)."""


class UnknownElementError(StreamevalError, KeyError):
    """``revert`` of an element (or of more copies of it) than the table holds."""

    def __str__(self):  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class SampleDesignError(StreamevalError):
    """A labelled sample's design is invalid: a weight or probability out of range, an entity
    outside a declared sample, an entity whose weight changes."""


class InvalidStateError(StreamevalError):
    """A serialised state (``from_dict``) is malformed or inconsistent."""


class InvalidVectorError(StreamevalError):
    """A feature vector has the wrong dimension or a non-finite value."""


class SettingsMismatchError(StreamevalError):
    """Two objects whose settings differ (a confidence, an interval method, a metric's
    parameters, a space or a dimension) were merged: refused, naming the setting and both values,
    before anything changes. The merged object would otherwise read its own settings over data
    gathered under the other's.

    >>> from streameval import ClusterSummaries
    >>> ClusterSummaries(space="cosine").merge(ClusterSummaries())
    Traceback (most recent call last):
    ...
    streameval.errors.SettingsMismatchError: cannot merge a ClusterSummaries with space='euclidean' into one with space='cosine': the space must be the same in both
    """


class InputError(StreamevalError):
    """A malformed input file or row (:mod:`streameval.io`): ``"<file>, line <n>: <problem>"``.

    ``source``, ``line`` (``None`` for the file as a whole) and ``problem`` are kept apart;
    ``unit`` names what ``line`` counts (``"line"``, or ``"row"`` for Parquet).

    >>> raise InputError("runs.csv", 4, "missing predicted label")
    Traceback (most recent call last):
    ...
    streameval.errors.InputError: runs.csv, line 4: missing predicted label
    """

    def __init__(self, source: str, line: int | None, problem: str, unit: str = "line"):
        self.source, self.line, self.problem = source, line, problem
        where = source if line is None else f"{source}, {unit} {line}"
        super().__init__(f"{where}: {problem}")


class PageStreamError(StreamevalError):
    """A malformed page-stream file, or gold and predicted streams that do not match
    (:mod:`streameval.pss`)."""


class CLIError(StreamevalError):
    """A user-facing error of the command line (:mod:`streameval.cli`): printed as one line on
    standard error, exit status 1."""


class ConcurrentUseError(StreamevalError, RuntimeError):
    """A guarded object was changed while another change to it was running (threads, callbacks).

    streameval objects are not thread-safe; share one across threads through
    :class:`streameval.Synchronized`.
    """


class MissingDependencyError(ImportError):
    """An optional dependency is not installed; the message names the extra that provides it.

    >>> raise MissingDependencyError("EventTimeWindow", "sortedcontainers", "window")
    Traceback (most recent call last):
    ...
    streameval.errors.MissingDependencyError: EventTimeWindow needs the optional package 'sortedcontainers', which is not installed: pip install "streameval[window]" (in a source checkout: pip install -e ".[window]")
    """

    def __init__(self, feature: str, package: str, extra: str):
        super().__init__(
            f"{feature} needs the optional package {package!r}, which is not installed: "
            + install_hint(extra),
            name=package,
        )
        self.feature, self.package, self.extra = feature, package, extra


def install_hint(extra: str) -> str:
    """How to install the optional dependencies of ``extra``, both ways: from a package index
    (once streameval is published there) and from a source checkout.

    >>> install_hint("cli")
    'pip install "streameval[cli]" (in a source checkout: pip install -e ".[cli]")'
    """
    return f'pip install "streameval[{extra}]" (in a source checkout: pip install -e ".[{extra}]")'


def require(module: str, feature: str, extra: str):
    """Import and return ``module``, or raise :class:`MissingDependencyError` naming ``extra``.

    >>> require("math", "this example", "none").__name__
    'math'
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        missing = (e.name or module).split(".")[0]
        raise MissingDependencyError(feature, missing, extra) from None
