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
    """Base class of every error streameval raises on bad input (a ``ValueError``). Raised before
    anything changes: the object keeps its state.

    >>> from streameval import Contingency
    >>> t = Contingency()
    >>> try:
    ...     t.update(None, "a")
    ... except StreamevalError as e:          # MissingLabelError, a StreamevalError
    ...     print(type(e).__name__, isinstance(e, ValueError), t.n)
    MissingLabelError True 0
    """


class MissingLabelError(StreamevalError):
    """A label is ``None`` or NaN.

    >>> from streameval import Contingency
    >>> Contingency().update(None, "a")
    Traceback (most recent call last):
    ...
    streameval.errors.MissingLabelError: y_true is missing (None); pass a label, or use Contingency(missing="skip") ...
    """


class InvalidLabelError(StreamevalError):
    """A label is not hashable, so it cannot name a cluster.

    >>> from streameval import Contingency
    >>> Contingency().update([1], "a")
    Traceback (most recent call last):
    ...
    streameval.errors.InvalidLabelError: y_true must be hashable to name a cluster, got list: [1]
    """


class InvalidWeightError(StreamevalError):
    """A multiplicity is not a positive integer (or an integral float such as River's ``1.0``).

    >>> from streameval import Contingency
    >>> Contingency().update(1, "a", w=0)
    Traceback (most recent call last):
    ...
    streameval.errors.InvalidWeightError: weight w must be a positive integer multiplicity ..., got 0
    """


class UnknownElementError(StreamevalError, KeyError):
    """``revert`` of an element (or of more copies of it) than the table holds.

    >>> from streameval import Contingency
    >>> Contingency().revert(1, "a")
    Traceback (most recent call last):
    ...
    streameval.errors.UnknownElementError: revert of (y_true=1, y_pred='a', w=1): the table holds 0 such elements
    """

    def __str__(self):  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class SampleDesignError(StreamevalError):
    """A labelled sample's design is invalid: a weight or probability out of range, an entity
    outside a declared sample, an entity whose weight changes.

    >>> from streameval import SampleEstimator
    >>> SampleEstimator(design={"a": 2.0}).update("b", 1)
    Traceback (most recent call last):
    ...
    streameval.errors.SampleDesignError: entity 'b' is labelled but outside the declared sample ...
    """


class InvalidStateError(StreamevalError):
    """A serialised state (``from_dict``) is malformed or inconsistent.

    >>> from streameval import Contingency
    >>> Contingency.from_dict({"bad": 1})
    Traceback (most recent call last):
    ...
    streameval.errors.InvalidStateError: not a streameval Contingency state: format is None, ...
    """


class InvalidVectorError(StreamevalError):
    """A feature vector has the wrong dimension or a non-finite value.

    >>> from streameval import ClusterSummaries
    >>> ClusterSummaries().update([1.0, float("nan")], "a")
    Traceback (most recent call last):
    ...
    streameval.errors.InvalidVectorError: vector has a non-finite value: [1.0, nan]
    """


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
    (:mod:`streameval.pss`).

    >>> from streameval import PageStream
    >>> PageStream().update(2, 1)
    Traceback (most recent call last):
    ...
    streameval.errors.PageStreamError: page 0, true flag: a page flag must be 0 or 1, got 2
    """


class CLIError(StreamevalError):
    """A user-facing error of the command line (:mod:`streameval.cli`): printed as one line on
    standard error, exit status 1.

    >>> from streameval.cli import build_parser
    >>> from streameval.cli.watch import cmd_watch
    >>> cmd_watch(build_parser().parse_args(["watch", "-", "--true", "t", "--pred", "p", "--resume"]))
    Traceback (most recent call last):
    ...
    streameval.errors.CLIError: --resume needs --checkpoint PATH
    """


class ConcurrentUseError(StreamevalError, RuntimeError):
    """A guarded object was changed while another change to it was running (threads, callbacks).

    streameval objects are not thread-safe; share one across threads through
    :class:`streameval.Synchronized`.

    A label whose hash updates the same window re-enters it; the second call is refused, and the
    first, whose label then fails, changes nothing:

    >>> from streameval import CountWindow, Rand
    >>> class Reentrant:
    ...     def __hash__(self):
    ...         win.update(0, 0)
    ...         return 0
    >>> win = CountWindow(2, [Rand()])
    >>> win.update(Reentrant(), "a")
    Traceback (most recent call last):
    ...
    streameval.errors.ConcurrentUseError: CountWindow.update was called while another call was changing the same CountWindow ...
    >>> len(win), win.evaluator.table.n
    (0, 0)
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
