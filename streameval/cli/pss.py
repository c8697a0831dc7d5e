"""``streameval pss``: page-stream segmentation scoring, parsed and run by :mod:`streameval.pss`
(``--compare``: intervals and paired tests, :mod:`.compare`)."""

from __future__ import annotations

import argparse

from ..errors import CLIError
from .render import EXTRA_HINT, PROG

__all__ = ["cmd_pss"]


def cmd_pss(argv) -> int:
    """``streameval pss ...``: :mod:`streameval.pss` is imported only here."""
    import importlib

    if "--compare" in argv:  # intervals and paired tests: streameval.cli.compare
        from .compare import cmd_pss_compare

        return cmd_pss_compare([a for a in argv if a != "--compare"])
    try:
        pss = importlib.import_module("streameval.pss")
    except ModuleNotFoundError as e:
        if e.name != "streameval.pss":
            raise CLIError(f"streameval pss needs {e.name}: {EXTRA_HINT}") from None
        raise CLIError(
            "the pss subcommand is not available: this installation has no streameval.pss module "
            "(page-stream segmentation)"
        ) from None
    parser = argparse.ArgumentParser(
        prog=f"{PROG} pss", description="Score predicted page streams against gold page streams."
    )
    pss.configure_parser(parser)
    return int(pss.main(parser.parse_args(argv)) or 0)


def add_parser(sub) -> None:
    """Name ``pss`` in the help of ``sub`` (its own parser is built by :func:`cmd_pss`)."""
    sub.add_parser("pss", add_help=False, help="score predicted page streams against gold ones "
                   "(see 'streameval pss --help')")
