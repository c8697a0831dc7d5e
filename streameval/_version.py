"""The installed version, in a module of its own so that any module can read it without importing
the package's ``__init__`` (which imports almost every module: a cycle).

The one version source is pyproject.toml's ``[project] version``, read from the installed metadata.

>>> isinstance(__version__, str)
True
"""

from importlib import metadata as _metadata

try:
    __version__: str = _metadata.version("streameval")
except _metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
