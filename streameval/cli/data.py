"""``streameval grafana`` / ``streameval alerts``: print the Grafana dashboard and the Prometheus
alert rules shipped in ``streameval/data/``."""

from __future__ import annotations

import sys

__all__ = ["DATA_FILES", "cmd_data", "add_parsers"]

DATA_FILES = {"grafana": "grafana-dashboard.json", "alerts": "prometheus-alerts.yml"}


def cmd_data(args) -> int:
    """Print a file shipped in the package. O(size of the file).

    >>> import argparse, contextlib, io
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = cmd_data(argparse.Namespace(data="alerts"))
    >>> code, out.getvalue().splitlines()[0][:26]
    (0, '# Prometheus alert rules f')
    """
    from importlib import resources

    sys.stdout.write(resources.files("streameval").joinpath("data").joinpath(DATA_FILES[args.data])
                     .read_text(encoding="utf-8"))
    return 0


def add_parsers(sub) -> None:
    """Add ``grafana`` and ``alerts`` to ``sub``. O(1).

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="streameval")
    >>> add_parsers(parser.add_subparsers())
    >>> args = parser.parse_args(["grafana"])
    >>> args.func is cmd_data, args.data
    (True, 'grafana')
    """
    for name, what in (("grafana", "a Grafana dashboard (JSON) for the watch metrics"),
                       ("alerts", "Prometheus alert rules (YAML) for the watch metrics")):
        p = sub.add_parser(name, help=f"print {what}",
                           description=f"Print {what}, shipped in the package as "
                           f"streameval/data/{DATA_FILES[name]}.")
        p.set_defaults(func=cmd_data, data=name)
