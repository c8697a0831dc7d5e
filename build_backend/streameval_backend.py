"""streameval's build backend (pyproject.toml ``[build-system]``): maturin's, behind one check.

Building streameval from source compiles its Rust core, so it needs ``cargo``. When ``cargo`` is not
on the ``PATH``, maturin's own backend silently downloads a Rust toolchain into a temporary
directory -- about 660 MB and several minutes, while pip shows only that it is still running. This
backend stops first, with a message saying what is missing and what to do: install Rust
(https://rustup.rs or the system's package manager), or install a wheel (no Rust needed), or set
``STREAMEVAL_DOWNLOAD_RUST=1`` to let maturin download the toolchain (a notice says so). With
``cargo`` present every hook is maturin's, unchanged.
"""

from __future__ import annotations

import os
import shutil
import sys

import maturin

DOWNLOAD = "STREAMEVAL_DOWNLOAD_RUST"

NO_CARGO = f"""
streameval: building from source compiles its Rust core, and cargo (Rust's build tool) is not on
the PATH. Either
  - install Rust (https://rustup.rs, or e.g. `apt-get install cargo`) and run the install again, or
  - install a prebuilt wheel instead of the source distribution (no Rust needed), or
  - set {DOWNLOAD}=1 to let maturin download a Rust toolchain into a temporary directory
    (about 660 MB, several minutes; it is not kept).
"""

DOWNLOADING = """
streameval: cargo is not on the PATH; maturin now downloads a Rust toolchain into a temporary
directory (about 660 MB, several minutes) to compile the Rust core.
"""


def check_rust() -> None:
    """Return when ``cargo`` is on the ``PATH`` (or the download is allowed, with a notice on
    standard error); otherwise print :data:`NO_CARGO` and exit with status 1."""
    if shutil.which("cargo"):
        return
    if os.environ.get(DOWNLOAD) == "1":
        sys.stderr.write(DOWNLOADING)
        return
    sys.stderr.write(NO_CARGO)
    sys.stderr.flush()
    raise SystemExit(1)


HOOKS = (
    "build_wheel", "build_sdist", "build_editable", "get_requires_for_build_wheel",
    "get_requires_for_build_sdist", "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel", "prepare_metadata_for_build_editable",
)


def _guarded(name: str):
    hook = getattr(maturin, name)

    def run(*args, **kwargs):
        check_rust()
        return hook(*args, **kwargs)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"maturin's ``{name}``, after :func:`check_rust`."
    return run


for _name in HOOKS:
    if hasattr(maturin, _name):  # a hook maturin lacks stays absent (the frontend's defaults apply)
        globals()[_name] = _guarded(_name)
