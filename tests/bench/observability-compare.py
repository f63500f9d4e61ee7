#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What metrics and tracing cost: the gateway with observability on next to
the same gateway with it off, in one run.

    observability-compare.py BUILD_DIR [--streams N] [--seconds S] [--smoke]

Two gateways from BUILD_DIR serve the same pipeline (the default stages in
front of a `runtime` source), one worker each, pinned to one processor
while the load and the upstreams take the other: *off* with no telemetry
key, *on* with `otlp-endpoint` (an OTLP receiver in this process, every
request traced: `trace-sample-ratio=1`) and `metrics-tenant-label=true`.
It prints three figures, each with its target:

- cpu: the gateway's CPU time per upstream delta through, on N paced
  streams (one delta every 50 ms each), on next to off, rounds alternated;
- ttft: the time to the first delta, p50, the same requests to each in
  turn, and what on adds;
- scrape: one `GET /metrics` of a third gateway whose pipeline has 50
  routes of 10 stages, median and worst of many, and a worker's `/healthz`
  answered meanwhile, next to idle: a scrape renders off the workers.

It uses the upstream and client of nginx-compare/ and Python's standard
library; everything listens on 127.0.0.1, in a temporary folder removed at
the end, and each process is stopped by its own pid.
"""
import argparse
import http.server
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "nginx-compare"))
import client  # noqa: E402

SOURCE = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(SOURCE, "data")
AUTH = ("Authorization: Bearer demo-token-alice", "X-Tenant-ID: acme")
STAGES = "auth;rate-limit;budget;release-line;extraction;citation;errors"
STAGE_GROUPS = """
[stage:auth]
type=auth
tokens-file=%(data)s/demo-tokens.ini

[stage:rate-limit]
type=rate-limit
key=tenant-principal
rate=1000000
burst=1000000

[stage:budget]
type=budget
tokens-per-window=1000000000000000
window-seconds=60
reserve-tokens=1

[stage:release-line]
type=release-line

[stage:extraction]
type=extraction

[stage:citation]
type=citation

[stage:errors]
type=error-map
table=%(data)s/error-map.ini
"""


def proc_stat(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path, timeout=10):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout) as r:
        return r.read()


class Sink(http.server.BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that counts the spans it is sent."""
    spans = 0
    posts = 0

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Sink.posts += 1
        Sink.spans += body.count(b'"spanId"')
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


class Rig:
    def __init__(self, build, workdir):
        self.build = build
        self.dir = workdir
        self.processes = []
        cpus = sorted(os.sched_getaffinity(0))
        self.gateway_cpu = None
        if len(cpus) >= 2:
            os.sched_setaffinity(0, {cpus[0]})
            self.gateway_cpu = cpus[1]

    def spawn(self, name, argv, pinned=False):
        if pinned and self.gateway_cpu is not None and shutil.which("taskset"):
            argv = ["taskset", "-c", str(self.gateway_cpu)] + argv
        log = open(os.path.join(self.dir, name + ".log"), "w")
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=self.dir)
        process.name = name
        self.processes.append(process)
        return process

    def wait_port(self, process, port):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit("%s exited: see %s.log" % (process.name, process.name))
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("%s does not listen on %d" % (process.name, port))

    def upstream(self, kind, *args):
        port = free_port()
        process = self.spawn("upstream-" + kind, [sys.executable, os.path.join(HERE, "nginx-compare", "upstream.py"),
                                                  kind, str(port)] + [str(a) for a in args])
        self.wait_port(process, port)
        return port

    def gateway(self, name, text):
        port = int(text.split("listen=127.0.0.1:", 1)[1].split("\n", 1)[0])
        path = os.path.join(self.dir, name + ".pipeline")
        with open(path, "w") as f:
            f.write(text)
        process = self.spawn(name, [os.path.join(self.build, "gateway", "symfonic-gateway"), "--pipeline", path],
                             pinned=True)
        self.wait_port(process, port)
        return port, process.pid

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def pipeline(port, routes, extra=""):
    text = "[gateway]\nlisten=127.0.0.1:%d\nworkers=1\nmax-connections=4096\n%s\n" % (port, extra)
    for name, url in routes.items():
        text += ("\n[route:%s]\npath=/%s\nkind=typed\nsource=%s\nstages=%s\n\n[source:%s]\ntype=runtime\nurl=%s\n"
                 % (name, name, name, STAGES, name, url))
    return text + STAGE_GROUPS % {"data": DATA}


def paced_cost(port, pid, upstream_port, streams, seconds, ramp):
    """CPU microseconds of the gateway per delta its clients saw."""
    load = client.Load(port, "/paced", AUTH, repeat=True)
    load.open(streams)
    load.pump(ramp)
    cpu, seen = proc_stat(pid), load.deltas
    load.pump(seconds)
    cpu, seen = proc_stat(pid) - cpu, load.deltas - seen
    load.close_all()
    if load.failures or not seen:
        raise SystemExit("paced: %d deltas seen, failures %s" % (seen, load.failures or "none"))
    return cpu / seen * 1e6


def first_delta_ms(port):
    response = client.Response()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        start = time.perf_counter()
        s.sendall(client.request("/burst", AUTH))
        while response.first_delta is None:
            data = s.recv(65536)
            if not data or response.feed(data, time.perf_counter()):
                break
    if response.first_delta is None:
        raise SystemExit("ttft: no first delta (status %d)" % response.status)
    return (response.first_delta - start) * 1000


def line(name, text, met, target):
    print("%-7s %s  (target %s: %s)" % (name, text, target, "met" if met else "missed"), flush=True)
    return met


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("--streams", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ttft-rounds", type=int, default=300)
    parser.add_argument("--scrapes", type=int, default=100)
    parser.add_argument("--smoke", action="store_true", help="a seconds-long run: every figure, no verdict")
    a = parser.parse_args()
    if a.smoke:
        a.streams, a.seconds, a.rounds, a.ttft_rounds, a.scrapes = 20, 1.5, 1, 20, 10

    workdir = tempfile.mkdtemp(prefix="observability-compare-")
    rig = Rig(os.path.abspath(a.build), workdir)
    sink = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    met = []
    try:
        paced = rig.upstream("paced", 200, 50)
        fast = rig.upstream("fast", 200, 3)
        routes = {"paced": "http://127.0.0.1:%d/" % paced, "burst": "http://127.0.0.1:%d/" % fast}
        on_extra = ("otlp-endpoint=http://127.0.0.1:%d/v1/traces\ntrace-sample-ratio=1\nmetrics-tenant-label=true"
                    % sink.server_address[1])
        off_port, off_pid = rig.gateway("off", pipeline(free_port(), routes))
        on_port, on_pid = rig.gateway("on", pipeline(free_port(), routes, on_extra))

        # CPU per delta, rounds alternated so that drift hits both alike
        costs = {"off": [], "on": []}
        for _ in range(a.rounds):
            for label, port, pid in (("off", off_port, off_pid), ("on", on_port, on_pid)):
                costs[label].append(paced_cost(port, pid, paced, a.streams, a.seconds, 2 if not a.smoke else 0.5))
                time.sleep(1)
        off, on = statistics.median(costs["off"]), statistics.median(costs["on"])
        # a smoke run may be too short for the clock ticks CPU time counts in
        ratio = on / off if off > 0 else float("nan")
        met.append(line("cpu", "off %.2f us/delta  on %.2f us/delta  ratio %.3f  (%d paced streams, every request "
                        "traced, %d spans received)" % (off, on, ratio, a.streams, Sink.spans),
                        ratio <= 1.03, "<= 1.03"))

        # time to the first delta, the same requests to each in turn
        times = {"off": [], "on": []}
        for _ in range(a.ttft_rounds):
            for label, port in (("off", off_port), ("on", on_port)):
                times[label].append(first_delta_ms(port))
        p50 = {k: statistics.median(v) for k, v in times.items()}
        added = p50["on"] - p50["off"]
        met.append(line("ttft", "off p50 %.3f ms  on p50 %.3f ms  added %.3f ms  (%d requests each)"
                        % (p50["off"], p50["on"], added, a.ttft_rounds), added <= 0.02, "<= 0.02 ms"))

        # a scrape of 50 routes of 10 stages, and a worker meanwhile
        big_port = free_port()
        text = "[gateway]\nlisten=127.0.0.1:%d\nworkers=2\nmetrics-tenant-label=true\n" % big_port
        stages = ["auth", "rate-limit", "budget", "release-line", "x1", "x2", "x3", "c1", "c2", "c3"]
        for i in range(50):
            text += ("\n[route:r%02d]\npath=/r%02d\nkind=typed\nsource=s\nstages=%s\n" % (i, i, ";".join(stages)))
        text += "\n[source:s]\ntype=runtime\nurl=http://127.0.0.1:%d/\n" % fast
        text += (STAGE_GROUPS % {"data": DATA}).split("[stage:extraction]")[0]
        for name in stages[4:]:
            text += "\n[stage:%s]\ntype=%s\n" % (name, "extraction" if name[0] == "x" else "citation")
        big_port, _ = rig.gateway("scrape", text)
        for i in range(50):
            load = client.Load(big_port, "/r%02d" % i, AUTH)
            load.open(1)
            load.pump(5, until=lambda load=load: load.completed >= 1)
            load.close_all()

        def healthz_ms(n):
            out = []
            for _ in range(n):
                start = time.perf_counter()
                http_get(big_port, "/healthz")
                out.append((time.perf_counter() - start) * 1000)
            return out

        idle = healthz_ms(a.scrapes)
        scrapes, size, stop = [], 0, threading.Event()

        def scrape():
            """One GET /metrics on a new connection, read whole: milliseconds, bytes."""
            with socket.create_connection(("127.0.0.1", big_port), timeout=10) as s:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                start = time.perf_counter()
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                received = 0
                while True:
                    data = s.recv(1 << 20)
                    if not data:
                        break
                    received += len(data)
                return (time.perf_counter() - start) * 1000, received

        def scraper():
            nonlocal size
            while not stop.is_set():
                ms, size = scrape()
                scrapes.append(ms)

        thread = threading.Thread(target=scraper)
        thread.start()
        busy = healthz_ms(a.scrapes)
        while len(scrapes) < a.scrapes:
            time.sleep(0.01)
        stop.set()
        thread.join()
        scrape_p50 = statistics.median(scrapes)
        met.append(line("scrape", "50 routes x 10 stages: p50 %.2f ms  max %.2f ms  %d KB  (%d scrapes); a worker's "
                        "/healthz meanwhile: p50 %.3f ms max %.2f ms, idle p50 %.3f ms max %.2f ms"
                        % (scrape_p50, max(scrapes), size // 1024, len(scrapes), statistics.median(busy), max(busy),
                           statistics.median(idle), max(idle)),
                        scrape_p50 <= 5, "<= 5 ms"))
    finally:
        rig.stop()
        sink.shutdown()
        shutil.rmtree(workdir, ignore_errors=True)

    print("%d of %d targets met" % (sum(met), len(met)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
