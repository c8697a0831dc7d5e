"""The ``watch`` Prometheus endpoint under bursts and slow clients, against prometheus-client's own
server (the one ``watch`` used before), in one run on loopback.

Each server runs in its own process and serves the same collector (``watch``'s exporter, one
published snapshot). A client process (this script, asyncio) then:

- **burst N**: opens N connections at once (from ``--clients`` processes, started together),
  each sending one scrape (``Connection: close``), and records, per scrape, the time from the
  start of the burst to the full response (a scrape not answered within 30 s counts as lost);
- **slowloris**: holds S connections that send an unfinished request head, then makes 100
  ordinary scrapes while they are held.

For each, the server process's peak thread count (sampled from ``/proc/PID/status`` every 5 ms).
Writes ``docs/benchmarks/prometheus.md``.

    PYTHONPATH=. python benchmarks/bench_prometheus.py [--bursts 300 2000] [--slow 1000] [--out PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

NO_COUNTS = ("No stream and no instruction counts: the servers publish a fixed snapshot of 40 "
             "metric values (no contingency table, so no cells per row), and what is measured is "
             "latency under concurrent scrapes from other processes, set by scheduling and "
             "queueing rather than by instructions; a callgrind count of one process would miss it.")

SERVER = r'''
import sys, time
from streameval.cli.prometheus import PrometheusExporter
kind = sys.argv[1]
values = {"rows": 10**6, "elements": 10**6, "skipped": 3,
          "all": {f"M{i}": i / 40 for i in range(40)}, "window": {f"M{i}": i / 40 for i in range(40)}}
if kind == "streameval":
    e = PrometheusExporter("127.0.0.1", 0, {"job": "bench"})
    e.publish(values, time.time())
    port = e.port
else:  # prometheus-client's start_http_server, serving the same collector
    import prometheus_client.exposition as ex
    from prometheus_client import CollectorRegistry, start_http_server
    real = ex.ThreadingWSGIServer.__init__
    e = PrometheusExporter.__new__(PrometheusExporter)
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
    e.gauge, e.counter, e.labels, e.snapshot = GaugeMetricFamily, CounterMetricFamily, {"job": "bench"}, None
    registry = CollectorRegistry(); registry.register(e)
    e.publish(values, time.time())
    server, _ = start_http_server(0, addr="127.0.0.1", registry=registry)
    port = server.server_port
print(port, flush=True)
sys.stdin.read()
'''


def threads_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))


class Peak:
    """The peak thread count of process ``pid`` while the block runs."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop = pid, threads_of(pid), threading.Event()

    def __enter__(self):
        def watch():
            while not self.stop.wait(0.005):
                self.peak = max(self.peak, threads_of(self.pid))
        self.t = threading.Thread(target=watch)
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.t.join()


async def scrape(port, t0, request=b"GET /metrics HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n"):
    try:
        async def go():
            r, w = await asyncio.open_connection("127.0.0.1", port)
            w.write(request)
            await w.drain()
            data = await r.read()
            w.close()
            return data
        data = await asyncio.wait_for(go(), 30)
        return time.perf_counter() - t0 if data.startswith(b"HTTP/1.") and b" 200 " in data[:16] else None
    except (OSError, asyncio.TimeoutError):
        return None


async def burst(port, n, start=None):
    if start is not None:  # a common start, in wall-clock time, for several client processes
        await asyncio.sleep(max(0.0, start - time.time()))
    t0 = time.perf_counter()
    return await asyncio.gather(*(scrape(port, t0) for _ in range(n)))


def _client(port, n, start):
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    return asyncio.run(burst(port, n, start))


def bursts(port, n, clients):
    """``n`` scrapes from ``clients`` processes at once (the client's own Python work spread
    over processes, so the figures measure the server more than the client)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(clients) as pool:
        start = time.time() + 1.0
        parts = [pool.submit(_client, port, n // clients + (k < n % clients), start)
                 for k in range(clients)]
        return [t for f in parts for t in f.result()]


async def slowloris(port, s):
    held = []
    for _ in range(s):
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port)
            w.write(b"GET /metrics HTTP/1.1\r\nX-Slow: ")
            held.append(w)
        except OSError:
            break
    t0 = time.perf_counter()
    out = await asyncio.gather(*(scrape(port, t0) for _ in range(100)))
    for w in held:
        w.close()
    return out


def figures(times):
    ok = sorted(t for t in times if t is not None)
    if not ok:
        return len(ok), float("nan"), float("nan"), float("nan")
    return len(ok), statistics.median(ok), ok[int(0.99 * (len(ok) - 1))], ok[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bursts", type=int, nargs="+", default=[300, 2000])
    ap.add_argument("--slow", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=4, help="client processes of a burst")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "prometheus.md"))
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    rows = []
    for kind in ("streameval", "prometheus-client"):
        proc = subprocess.Popen([sys.executable, "-c", SERVER, kind], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                preexec_fn=lambda: resource.setrlimit(
                                    resource.RLIMIT_NOFILE, (min(hard, 65536), hard)))
        port = int(proc.stdout.readline())
        try:
            for n in args.bursts:
                with Peak(proc.pid) as peak:
                    times = bursts(port, n, args.clients)
                rows.append((kind, f"burst of {n}", n, *figures(times), peak.peak))
                time.sleep(2)
            with Peak(proc.pid) as peak:
                times = asyncio.run(slowloris(port, args.slow))
            rows.append((kind, f"100 scrapes, {args.slow} slow clients held", 100, *figures(times), peak.peak))
        finally:
            proc.stdin.close()
            proc.kill()
            proc.wait()
    lines = [
        "# Benchmarks: the Prometheus endpoint under bursts",
        "",
        "`streameval watch --prometheus-port` serves scrapes from one asyncio thread (listen backlog "
        "4096, a 5 s budget per request head and response, keep-alive), beside prometheus-client's "
        "`start_http_server` (a thread per connection, the standard library's backlog of 5), both "
        "serving the same collector on loopback, in one run. Latency: from the start of the burst "
        "to the full response; a scrape not answered within 30 s is lost. Threads: the server "
        "process's peak during the burst. The clients of a burst are 4 processes started together "
        "(the client's own Python work is spread, so the figures measure the server more than "
        "the client); the machine's other load is part of the figures.",
        "",
        NO_COUNTS,
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}.",
        "Reproduce: `PYTHONPATH=. python benchmarks/bench_prometheus.py`.",
        "",
        "| server | load | answered | median (s) | p99 (s) | max (s) | peak threads |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind, load, n, ok, med, p99, mx, peak in rows:
        lines.append(f"| {kind} | {load} | {ok}/{n} | {med:.3f} | {p99:.3f} | {mx:.3f} | {peak} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
