"""``streameval grafana`` / ``streameval alerts``: print the Grafana dashboard and the Prometheus
alert rules shipped in ``streameval/data/``."""

from __future__ import annotations

import sys

__all__ = ["DATA_FILES", "cmd_data", "add_parsers"]

DATA_FILES = {"grafana": "grafana-dashboard.json", "alerts": "prometheus-alerts.yml"}


def cmd_data(args) -> int:
    """Print a file shipped in the package."""
    from importlib import resources

    sys.stdout.write(resources.files("streameval").joinpath("data").joinpath(DATA_FILES[args.data])
                     .read_text(encoding="utf-8"))
    return 0


def add_parsers(sub) -> None:
    """Add ``grafana`` and ``alerts`` to ``sub``."""
    for name, what in (("grafana", "a Grafana dashboard (JSON) for the watch metrics"),
                       ("alerts", "Prometheus alert rules (YAML) for the watch metrics")):
        p = sub.add_parser(name, help=f"print {what}",
                           description=f"Print {what}, shipped in the package as "
                           f"streameval/data/{DATA_FILES[name]}.")
        p.set_defaults(func=cmd_data, data=name)
