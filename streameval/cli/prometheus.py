"""The Prometheus endpoint of ``streameval watch`` (needs ``prometheus-client``)."""

from __future__ import annotations

import asyncio
from typing import Any

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

    Every series carries the ``--label`` pairs. A scrape reads one coherent snapshot. Cost:
    :meth:`publish` O(1); a scrape O(series) once per publication (:meth:`exposition`).

    >>> import urllib.request
    >>> exp = PrometheusExporter("127.0.0.1", 0, {"job": "demo"})   # port 0: any free port
    >>> exp.publish({"rows": 4, "elements": 4, "skipped": 0, "all": {"Purity": 0.75}}, 1.0)
    >>> with urllib.request.urlopen(f"http://127.0.0.1:{exp.port}/metrics") as r:
    ...     text = r.read().decode()
    >>> [line for line in text.splitlines() if line.startswith(("streameval_metric", "streameval_rows"))]
    ['streameval_metric{job="demo",metric="Purity",scope="all"} 0.75', 'streameval_rows_total{job="demo"} 4.0', 'streameval_rows_skipped_total{job="demo"} 0.0']
    >>> exp.close()
    """

    def __init__(self, host: str, port: int, labels: dict, timeout: float = 5.0):
        try:
            from prometheus_client import CollectorRegistry
            from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
        except ImportError:
            raise CLIError(f"--prometheus-port needs prometheus-client: {EXTRA_HINT}") from None
        self.gauge, self.counter = GaugeMetricFamily, CounterMetricFamily
        self.labels = labels
        self.snapshot: tuple[dict, float] | None = None
        self.registry = CollectorRegistry()
        self.registry.register(self)
        try:
            self.server = ScrapeServer(host, port, self.exposition, timeout)
        except OSError as e:
            raise CLIError(f"cannot serve Prometheus metrics on {host}:{port}: {e.strerror}") from None
        self.port = self.server.port
        warn(f"serving Prometheus metrics on http://{host}:{self.port}/metrics")

    def exposition(self) -> bytes:
        """The text exposition of the current snapshot, rendered once per snapshot (every
        scrape between two publications gets the same bytes). O(series) once, then O(1)."""
        from prometheus_client import generate_latest

        snapshot = self.snapshot
        cached = self._rendered
        if cached is None or cached[0] is not snapshot:
            cached = self._rendered = (snapshot, generate_latest(self.registry))
        return cached[1]

    _rendered: tuple | None = None

    def publish(self, values: dict, updated: float) -> None:
        """Make ``values`` (a report, :meth:`WatchState.values
        <streameval.cli.watch_state.WatchState.values>`) and ``updated`` (the Unix time of the
        last row) what the next scrapes read. O(1): one assignment."""
        self.snapshot = (values, updated)  # one assignment: a scrape sees all of it or none

    def describe(self):
        """No series described up front (``prometheus_client``'s collector protocol): the
        registry then calls :meth:`collect` only at a scrape. O(1)."""
        return []

    def collect(self):
        """The metric families of the current snapshot (``prometheus_client``'s collector
        protocol), nothing before the first :meth:`publish`. O(series)."""
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
        """Stop serving (:meth:`ScrapeServer.close`). O(1)."""
        self.server.close()


class ScrapeServer:
    """A small HTTP/1.1 server for scrapes: one thread, one asyncio event loop, every connection
    a protocol object (no thread, no coroutine each), so thousands of concurrent scrapes cost
    little.

    - The listening socket has a backlog of 4096 (the kernel caps it at ``somaxconn``): a burst
      of connections waits in the kernel's queue instead of being refused or retried (the
      standard library's servers listen with a backlog of 5).
    - Every ``GET`` (any path) is answered with ``body()``; ``HEAD`` with its headers. A request
      with a body gets 405, a malformed one 400, a request head over 8 KiB 431.
    - A client gets ``timeout`` seconds to send each request head, and to take the response
      before the connection is dropped: a slow or silent client (slowloris) is disconnected,
      holding only a small object meanwhile. Connections are kept alive between scrapes for at
      most ``timeout`` idle seconds.
    - At most :attr:`MAX_OPEN` connections are served at once; beyond, new ones are closed at
      once (memory stays bounded under a flood).
    """

    MAX_OPEN = 10_000
    BACKLOG = 4096
    HEAD_LIMIT = 8192

    def __init__(self, host: str, port: int, body, timeout: float = 5.0):
        import socket
        import threading

        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.create_server((host, port), family=family, backlog=self.BACKLOG)
        self.port = self.sock.getsockname()[1]
        self.body, self.timeout, self.open = body, timeout, 0
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True,
                                       name="streameval-prometheus")
        self.thread.start()
        ready.wait()

    def _run(self, ready) -> None:
        loop = self.loop
        self.server = loop.run_until_complete(
            loop.create_server(lambda: _Scrape(self), sock=self.sock, backlog=self.BACKLOG))
        ready.set()
        loop.run_forever()
        loop.close()

    def close(self) -> None:
        """Stop serving: the listening socket closed, the thread ended."""
        def stop():
            self.server.close()
            self.loop.stop()

        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(stop)
            self.thread.join(timeout=10)


_REASONS = {200: "OK", 400: "Bad Request", 405: "Method Not Allowed",
            431: "Request Header Fields Too Large"}


def _parse(head: bytes) -> tuple[str | None, bool]:
    """``(method, keep the connection alive)`` of a request head; method ``None`` if malformed.

    >>> _parse(b"GET /metrics HTTP/1.1\\r\\nHost: x")
    ('GET', True)
    >>> _parse(b"\\x16\\x03 junk")
    (None, False)
    """
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return None, False
    headers = {k.strip().lower(): v.strip().lower()
               for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    if "content-length" in headers or "transfer-encoding" in headers:
        return "POST", False  # a request with a body: refused (scrapes have none)
    keep = headers.get("connection", "") != "close" and parts[2] == "HTTP/1.1"
    return parts[0], keep


def _response(status: int, payload: bytes, close: bool, head_only: bool = False) -> bytes:
    kind = "text/plain; version=0.0.4; charset=utf-8" if status == 200 else "text/plain; charset=utf-8"
    return (f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: {kind}\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: {'close' if close else 'keep-alive'}"
            "\r\n\r\n").encode("latin-1") + (b"" if head_only else payload)


class _Scrape(asyncio.Protocol):
    """One connection of :class:`ScrapeServer` (an asyncio protocol): request heads in, the
    exposition out, a deadline of ``timeout`` seconds on every wait for the client."""

    def __init__(self, server: ScrapeServer):
        self.server, self.buf = server, b""
        self.transport: Any = None
        self.deadline: Any = None
        self.counted = False

    def connection_made(self, transport) -> None:
        self.transport = transport
        if self.server.open >= ScrapeServer.MAX_OPEN:
            transport.abort()
            return
        self.server.open += 1
        self.counted = True
        self._arm()

    def _arm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline = self.server.loop.call_later(self.server.timeout, self.transport.abort)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while self.transport is not None and not self.transport.is_closing():
            end = self.buf.find(b"\r\n\r\n")
            if end < 0 and len(self.buf) <= ScrapeServer.HEAD_LIMIT:
                return  # wait for the rest of the head
            if end < 0 or end > ScrapeServer.HEAD_LIMIT:
                self._reply(431, b"request head too large\n", close=True)
                return
            head, self.buf = self.buf[:end], self.buf[end + 4:]
            method, keep = _parse(head)
            if method in ("GET", "HEAD"):
                self._reply(200, self.server.body(), close=not keep, head_only=method == "HEAD")
            elif method is None:
                self._reply(400, b"bad request\n", close=True)
            else:
                self._reply(405, b"GET only\n", close=True)

    def _reply(self, status: int, payload: bytes, close: bool, head_only: bool = False) -> None:
        transport = self.transport
        transport.write(_response(status, payload, close, head_only))
        self._arm()  # the response must be taken (and the next head sent) within the timeout
        if close:
            transport.close()  # after the response is flushed; the deadline aborts a stalled one

    def eof_received(self):
        return False  # close our side too

    def connection_lost(self, exc) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        if self.counted:
            self.server.open -= 1
            self.counted = False
        self.transport = None
