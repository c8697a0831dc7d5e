"""The Prometheus endpoint of ``streameval watch`` (needs ``prometheus-client``)."""

from __future__ import annotations

from ..errors import CLIError
from .render import EXTRA_HINT, warn

__all__ = ["PrometheusExporter"]


class PrometheusExporter:
    """The values of the last publication on ``http://HOST:PORT/metrics``, read at each scrape:

    - ``streameval_metric{metric, scope}`` (gauge; scope ``all`` or ``window``);
    - ``streameval_rows_total``, ``streameval_elements_total``, ``streameval_rows_skipped_total``
      (counters);
    - ``streameval_last_update_timestamp_seconds`` (gauge: Unix time of the last row taken);
    - ``streameval_drop`` (gauge, 0 or 1: a drop of the watched metric was flagged within the
      window), ``streameval_drops_total`` (counter: alert on its ``increase()``, which a flag that
      rises and falls between two scrapes cannot hide) and
      ``streameval_last_drop_timestamp_seconds`` (gauge, once a drop was flagged), when drops
      are detected; ``streameval_drop_interval{bound="value"|"low"|"high"}`` (gauge: the
      watched metric's mean over the window's blocks and its sampling-error band) and
      ``streameval_drop_reference`` (gauge: the calibrated detector's reference level), once
      known;
    - what broke over the window (:class:`~streameval.breakdown.ErrorAccount`):
      ``streameval_splits`` and ``streameval_merges`` (gauges), and the top-k lists only (bounded
      label cardinality: at most ``--top`` series each, labelled by ``rank`` and the label):
      ``streameval_split_entity_clusters{rank, entity}``,
      ``streameval_split_entity_entropy{rank, entity}``,
      ``streameval_merging_cluster_entities{rank, cluster}``,
      ``streameval_merging_cluster_extra_per_record{rank, cluster}``;
    - with ``--sample``: each estimate's value as ``streameval_metric{metric, scope="all"}``, its
      ``streameval_estimate_stderr``, ``streameval_estimate_low`` and ``streameval_estimate_high``
      (gauges, label ``metric``; the 95% interval's bounds) and ``streameval_labelled_share``.

    Every series carries the ``--label`` pairs. A scrape reads one coherent snapshot.
    """

    def __init__(self, host: str, port: int, labels: dict):
        try:
            from prometheus_client import CollectorRegistry, start_http_server
            from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
        except ImportError:
            raise CLIError(f"--prometheus-port needs prometheus-client: {EXTRA_HINT}") from None
        self.gauge, self.counter = GaugeMetricFamily, CounterMetricFamily
        self.labels = labels
        self.snapshot: tuple[dict, float] | None = None
        registry = CollectorRegistry()
        registry.register(self)
        try:
            self.server, _ = start_http_server(port, addr=host, registry=registry)
        except OSError as e:
            raise CLIError(f"cannot serve Prometheus metrics on {host}:{port}: {e.strerror}") from None
        self.port = self.server.server_port
        warn(f"serving Prometheus metrics on http://{host}:{self.port}/metrics")

    def publish(self, values: dict, updated: float) -> None:
        self.snapshot = (values, updated)  # one assignment: a scrape sees all of it or none

    def describe(self):
        return []

    def collect(self):
        if self.snapshot is None:
            return
        values, updated = self.snapshot
        keys, vals = list(self.labels), list(self.labels.values())
        g = self.gauge("streameval_metric", "Current value of a clustering evaluation metric",
                       labels=["metric", "scope", *keys])
        for scope in ("all", "window"):
            for name, v in values.get(scope, {}).items():
                g.add_metric([name, scope, *vals], v)
        yield g
        for key, name, text in (("rows", "streameval_rows", "Rows taken (all time)"),
                                ("elements", "streameval_elements",
                                 "Elements (total weight) in the all-time table"),
                                ("skipped", "streameval_rows_skipped", "Malformed rows skipped"),
                                ("drops", "streameval_drops", "Drops of the watched metric flagged")):
            if key in values:
                c = self.counter(name, text, labels=keys)
                c.add_metric(vals, values[key])
                yield c
        g = self.gauge("streameval_last_update_timestamp_seconds",
                       "Unix time at which the last row was taken", labels=keys)
        g.add_metric(vals, updated)
        yield g
        if "estimates" in values:  # watch --sample
            yield from self._estimates(values, keys, vals)
        if "drop" in values:
            g = self.gauge("streameval_drop", "1 when a drop of the watched metric was flagged "
                           "within the window, else 0", labels=keys)
            g.add_metric(vals, float(values["drop"]))
            yield g
        if values.get("last_drop") is not None:
            g = self.gauge("streameval_last_drop_timestamp_seconds",
                           "Unix time at which the last drop was flagged", labels=keys)
            g.add_metric(vals, values["last_drop"])
            yield g
        band = values.get("drop_interval")
        if band is not None:
            g = self.gauge("streameval_drop_interval", "The watched metric's mean over the "
                           "window's blocks (bound=value) and its 95% sampling-error band",
                           labels=["bound", *keys])
            for bound, v in zip(("value", "low", "high"), band):
                g.add_metric([bound, *vals], v)
            yield g
        if values.get("drop_reference") is not None:
            g = self.gauge("streameval_drop_reference", "The drop detector's reference level of "
                           "the watched metric (calibrated on a reference period)", labels=keys)
            g.add_metric(vals, values["drop_reference"])
            yield g
        broke = values.get("broke")
        if broke is not None:
            yield from self._broke(broke, keys, vals)

    def _broke(self, broke: dict, keys: list, vals: list):
        """What broke: the split and merge counts, and the top-k lists (one series per rank)."""
        for name, text in (("splits", "Extra pieces of the split entities (cells - K_true)"),
                           ("merges", "Extra entities in the merging clusters (cells - K_pred)")):
            g = self.gauge(f"streameval_{name}", text + ", over the window", labels=keys)
            g.add_metric(vals, broke[name])
            yield g
        for kind, label, fields in (
                ("split_entities", "entity",
                 (("clusters", "streameval_split_entity_clusters",
                   "Predicted clusters a top split entity is spread across"),
                  ("entropy", "streameval_split_entity_entropy",
                   "Splitting entropy (nats) of a top split entity"))),
                ("merging_clusters", "cluster",
                 (("entities", "streameval_merging_cluster_entities",
                   "Entities a top merging predicted cluster holds"),
                  ("extra_per_record", "streameval_merging_cluster_extra_per_record",
                   "Expected elements of other entities per record of a top merging cluster")))):
            for field, name, text in fields:
                g = self.gauge(name, text, labels=["rank", label, *keys])
                for rank, row in enumerate(broke[kind], 1):
                    g.add_metric([str(rank), str(row[label]), *vals], row[field])
                yield g

    def _estimates(self, values: dict, keys: list, vals: list):
        for field, text in (("stderr", "Standard error of an estimate from the labelled sample"),
                            ("low", "Lower bound of the 95% interval of an estimate"),
                            ("high", "Upper bound of the 95% interval of an estimate")):
            g = self.gauge(f"streameval_estimate_{field}", text, labels=["metric", *keys])
            for name, e in values["estimates"].items():
                g.add_metric([name, *vals], e[field])
            yield g
        g = self.gauge("streameval_labelled_share", "Share of the elements that carry a true "
                       "label (the labelled sample)", labels=keys)
        g.add_metric(vals, values["labelled_share"])
        yield g

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
