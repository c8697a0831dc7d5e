"""Exceptions raised by streameval.

Every rejected call leaves the state it was called on exactly as it was: the checks run before
anything is mutated.

>>> from streameval import Contingency
>>> table = Contingency()
>>> table.update(None, "a")
Traceback (most recent call last):
...
streameval.errors.MissingLabelError: y_true is missing (None); pass a label, or use Contingency(missing="skip") to skip and count such elements
"""


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


class InvalidStateError(StreamevalError):
    """A serialised state (``from_dict``) is malformed or inconsistent."""


class InvalidVectorError(StreamevalError):
    """A feature vector has the wrong dimension or a non-finite value."""
