#!/usr/bin/env python3
"""The gateway next to nginx 1.22 as a pure streaming proxy: same upstream,
same typed answer, one run. Prints each figure with its ratio to nginx and
the stream engine's target. See tests/bench/README.md.

    bench.py BUILD_DIR [--phases burst,paced,ttft,slow,idle] [--smoke]

Needs nginx (Debian: nginx-light), wrk (wrk) and python3; everything
listens on 127.0.0.1 on ports picked at run time, and every process it
starts is stopped by its own pid."""
import argparse, json, os, resource, shutil, socket, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True
import answer  # noqa: E402 (after the bytecode switch: nothing written to the source tree)
import client  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "..", "..", "data"))
AUTH = ("Authorization: Bearer demo-token-alice", "X-Tenant-ID: acme")
STAGES = "auth;rate-limit;budget;release-line;extraction;citation;errors"
KIB = 1024
PACED_INTERVAL = 0.05
IDLE_BATCH = 200
# the slow answer's deltas are long, so that what it holds before its terminal
# (some 460 KB) is far more than the socket buffers on its way can take
SLOW_WORDS = 80


class SetupError(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_stat(pid):
    """CPU seconds (user + system) of a process, all its threads."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except OSError:
                pass
    return found


def http_get(port, path, timeout=10):
    """A control request to one of the benchmark's upstreams; its JSON answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path.encode())
        data = b""
        while True:
            piece = s.recv(65536)
            if not piece:
                break
            data += piece
    return json.loads(data.split(b"\r\n\r\n", 1)[1])


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


class Rig:
    """The processes of one run, their ports and a temporary folder; stop() ends them all."""

    def __init__(self, tools, args):
        self.tools = tools
        self.args = args
        self.processes = []
        self.dir = tempfile.mkdtemp(prefix="symfonic-bench-")
        # nginx workers started by root run as an unprivileged user
        os.chmod(self.dir, 0o755)
        self.ports = {name: free_port() for name in
                      ("static", "proxy", "gateway", "paced", "idle", "fast")}
        cpus = sorted(os.sched_getaffinity(0))
        self.proxy_cpu = None
        if len(cpus) >= 2:
            # this script, wrk and the upstreams on one core, each proxy alone on another
            os.sched_setaffinity(0, {cpus[0]})
            self.proxy_cpu = cpus[1]
            self.pinning = "proxies on CPU %d, load and upstreams on CPU %d" % (cpus[1], cpus[0])
        else:
            self.pinning = "one core only: nothing pinned, proxies share it with the load"

    def spawn(self, name, argv, proxy=False):
        if proxy and self.proxy_cpu is not None:
            argv = [self.tools["taskset"], "-c", str(self.proxy_cpu)] + argv
        log = open(os.path.join(self.dir, name + ".log"), "ab")
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   cwd=self.dir)
        log.close()
        process.name = name
        self.processes.append(process)
        return process

    def log_tail(self, name, lines=15):
        try:
            with open(os.path.join(self.dir, name + ".log"), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def wait_port(self, process, port, seconds=20):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SetupError("%s exited with status %d:\n%s"
                                 % (process.name, process.returncode, self.log_tail(process.name)))
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SetupError("%s did not listen on port %d within %d s" % (process.name, port, seconds))

    def render(self, template, name, values):
        with open(os.path.join(HERE, template)) as f:
            text = f.read()
        for key, value in values.items():
            text = text.replace("@%s@" % key, str(value))
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def nginx(self, name, template, values, proxy):
        folder = os.path.join(self.dir, name)
        os.makedirs(folder)
        os.chmod(folder, 0o755)
        values = dict(values, DIR=folder, FILES=self.args.files, CONNECTIONS=self.args.files - 64)
        conf = self.render(template, name + ".conf", values)
        process = self.spawn(name, [self.tools["nginx"], "-e", os.path.join(folder, "error.log"), "-p", folder,
                                    "-c", conf], proxy=proxy)
        self.wait_port(process, values["PORT"])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            workers = children(process.pid)
            if workers:
                return workers[0]
            time.sleep(0.05)
        raise SetupError("%s started no worker" % name)

    def upstream(self, kind, *args):
        process = self.spawn(kind, [sys.executable, "-B", os.path.join(HERE, "upstream.py"), kind,
                                    str(self.ports[kind])] + [str(a) for a in args])
        self.wait_port(process, self.ports[kind])

    def pipeline(self):
        p = self.ports
        sources = {"burst": "http://127.0.0.1:%d/answer" % p["static"],
                   "paced": "http://127.0.0.1:%d/" % p["paced"],
                   "idle": "http://127.0.0.1:%d/" % p["idle"],
                   "slow": "http://127.0.0.1:%d/" % p["fast"]}
        text = ("[gateway]\nlisten=127.0.0.1:%d\nworkers=1\nmax-connections=%d\n"
                % (p["gateway"], self.args.files))
        for name, url in sources.items():
            text += ("\n[route:%s]\npath=/%s\nkind=typed\nsource=%s\nstages=%s\n"
                     "\n[source:%s]\ntype=runtime\nurl=%s\n" % (name, name, name, STAGES, name, url))
            if name == "idle":
                text += "# held streams stay silent between nudges\ntimeout=0\n"
        text += """
[stage:auth]
type=auth
tokens-file=%s

# metering stays in the path but never refuses
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
table=%s
""" % (os.path.join(DATA, "demo-tokens.ini"), os.path.join(DATA, "error-map.ini"))
        path = os.path.join(self.dir, "bench.pipeline")
        with open(path, "w") as f:
            f.write(text)
        return path

    def start(self):
        a = self.args
        body = os.path.join(self.dir, "answer.sse")
        with open(body, "wb") as f:
            f.write(b"".join(answer.events(a.deltas)))
        os.chmod(body, 0o644)
        self.answer_bytes = os.path.getsize(body)
        self.nginx("nginx-static", "static.conf.in", {"PORT": self.ports["static"], "ANSWER": body},
                   proxy=False)
        self.upstream("paced", a.deltas, int(PACED_INTERVAL * 1000))
        self.upstream("idle")
        self.upstream("fast", a.slow_deltas, SLOW_WORDS)
        self.nginx_pid = self.nginx("nginx-proxy", "proxy.conf.in",
                                    {"PORT": self.ports["proxy"], "STATIC": self.ports["static"],
                                     "PACED": self.ports["paced"], "IDLE": self.ports["idle"],
                                     "FAST": self.ports["fast"]}, proxy=True)
        self.gateway = self.spawn("gateway", [self.tools["symfonic-gateway"], "--pipeline", self.pipeline()],
                                  proxy=True)
        self.wait_port(self.gateway, self.ports["gateway"])

    def check_alive(self):
        for process in self.processes:
            if process.poll() is not None:
                raise SetupError("%s exited with status %d:\n%s"
                                 % (process.name, process.returncode, self.log_tail(process.name)))

    def targets(self):
        """(label, port, extra headers, pid measured) of each proxy, nginx first."""
        return (("nginx", self.ports["proxy"], (), self.nginx_pid),
                ("gateway", self.ports["gateway"], AUTH, self.gateway.pid))

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Report:
    """The figures as they come, one line each, and what the smoke run checks."""

    def __init__(self):
        self.problems = []
        self.met = []

    def line(self, phase, text, ok=None, target=""):
        if ok is not None:
            self.met.append(ok)
        suffix = "  (target %s%s)" % (target, "" if ok is None else ": " + ("met" if ok else "missed"))
        print("%-10s %s%s" % (phase, text, suffix if target else ""), flush=True)

    def problem(self, phase, text):
        self.problems.append(phase)
        print("%-10s %s" % (phase, text), flush=True)


def ratio(gateway, nginx):
    return gateway / nginx if nginx else float("nan")


def wrk(program, port, path, headers, seconds, connections, env=None):
    """Answers/s of one proxy, or None and why. post.lua posts the typed
    request and wants its terminal, unless @env sets BENCH_BODY and
    BENCH_TERMINAL."""
    argv = [program, "-t2", "-c%d" % connections, "-d%ds" % seconds, "--timeout", "10s",
            "-s", os.path.join(HERE, "post.lua")]
    for h in headers:
        argv += ["-H", h]
    argv.append("http://127.0.0.1:%d%s" % (port, path))
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 30,
                             env=dict(os.environ, **(env or {}))).stdout
    except subprocess.TimeoutExpired:
        return None, "wrk did not finish"
    counts, rate = {}, None
    for line in out.splitlines():
        if line.startswith("ANSWERS "):
            counts = {k: int(v) for k, v in (item.split("=") for item in line.split()[1:])}
        elif line.startswith("Requests/sec:"):
            rate = float(line.split()[1])
    if not counts or rate is None:
        return None, "wrk printed no result"
    wrong = ", ".join("%d %s" % (counts[k], k.replace("_", " ")) for k in ("not_ok", "incomplete", "socket_errors")
                      if counts[k])
    if wrong or not counts["requests"]:
        return None, "%d answers, %s" % (counts["requests"], wrong or "none complete")
    return rate, None


def phase_burst(rig, report, a):
    rates, busy = {}, {}
    for label, port, headers, pid in rig.targets():
        if a.warmup:
            wrk(rig.tools["wrk"], port, "/burst", headers, a.warmup, 64)
        cpu, start = proc_stat(pid), time.monotonic()
        rates[label], error = wrk(rig.tools["wrk"], port, "/burst", headers, a.seconds, 64)
        # below 100 % the load side, not the proxy, set the pace
        busy[label] = 100 * (proc_stat(pid) - cpu) / (time.monotonic() - start)
        if error:
            report.problem("burst", "%s: not a figure: %s" % (label, error))
    if all(rates.values()):
        r = ratio(rates["gateway"], rates["nginx"])
        report.line("burst", "nginx %.0f/s  gateway %.0f/s  ratio %.2f  (64 streams; proxy CPU busy: nginx %.0f %%, "
                    "gateway %.0f %%)" % (rates["nginx"], rates["gateway"], r, busy["nginx"], busy["gateway"]),
                    r >= 0.2, ">= 0.20")


def phase_paced(rig, report, a):
    # The unit is an upstream text delta that went through: the gateway's stages
    # drop the deltas that held only a tag or the memory block, so its clients
    # see fewer, and what they see is scaled back to the upstream's count.
    cost, busy = {}, {}
    upstream = rig.ports["paced"]
    for label, port, headers, pid in rig.targets():
        # the paced answer is the burst one: how many of its deltas this proxy's clients see
        fetched = fetch(port, "/burst", headers, whole=True)
        if not fetched or fetched[0].verdict():
            report.problem("paced", "%s: the answer did not come through whole" % label)
            continue
        answer_deltas = fetched[0].deltas
        load = client.Load(port, "/paced", headers, repeat=True)
        load.open(a.paced_streams)
        load.pump(a.ramp)
        cpu, sent, seen = proc_stat(pid), http_get(upstream, "/stats")["deltas"], load.deltas
        start = time.monotonic()
        load.pump(a.seconds)
        cpu, sent = proc_stat(pid) - cpu, http_get(upstream, "/stats")["deltas"] - sent
        busy[label] = 100 * cpu / (time.monotonic() - start)
        seen = load.deltas - seen
        load.close_all()
        if load.failures or not seen or (a.smoke and not load.completed):
            report.problem("paced", "%s: not a figure: %d deltas seen, %d answers complete, failures %s"
                           % (label, seen, load.completed, load.failures or "none"))
            continue
        through = seen * a.deltas / answer_deltas
        cost[label] = cpu / through * 1e6
        delivered = through / sent
        if delivered < 0.9:
            report.line("paced", "%s fell behind: its clients saw %.0f %% of what the upstream sent"
                        % (label, 100 * delivered))
        time.sleep(1)
    if len(cost) == 2:
        r = ratio(cost["gateway"], cost["nginx"])
        report.line("paced", "nginx %.1f us/delta  gateway %.1f us/delta  ratio %.2f  (%d streams, proxy CPU "
                    "per upstream delta through; busy: nginx %.0f %%, gateway %.0f %%)"
                    % (cost["nginx"], cost["gateway"], r, a.paced_streams, busy["nginx"], busy["gateway"]),
                    r <= 1.5, "<= 1.5")


def fetch(port, path, headers, whole):
    """One request on a new connection, read to its first text delta or, if
    whole, to its end: (the response, when the request was written), or None."""
    response = client.Response()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            start = time.perf_counter()
            s.sendall(client.request(path, headers))
            while whole or response.first_delta is None:
                data = s.recv(65536)
                if not data or response.feed(data, time.perf_counter()):
                    break
    except OSError:
        return None
    return response, start


def first_delta_ms(port, path, headers):
    """Milliseconds from the request written to the first text delta read, or None."""
    fetched = fetch(port, path, headers, whole=False)
    if not fetched or fetched[0].first_delta is None or fetched[0].status != 200:
        return None
    return (fetched[0].first_delta - fetched[1]) * 1000


def phase_ttft(rig, report, a):
    # the upstream alone, then each proxy in front of it, interleaved so that drift hits all alike
    sources = (("upstream", rig.ports["static"], "/answer", ()),) + tuple(
        (label, port, "/burst", headers) for label, port, headers, _ in rig.targets())
    times = {source[0]: [] for source in sources}
    failed = {source[0]: 0 for source in sources}
    deadline = time.monotonic() + a.phase_deadline
    for _ in range(a.ttft_rounds):
        if time.monotonic() > deadline:
            break
        for label, port, path, headers in sources:
            ms = first_delta_ms(port, path, headers)
            if ms is None:
                failed[label] += 1
            else:
                times[label].append(ms)
    for label in failed:
        if failed[label] or not times[label]:
            report.problem("ttft", "%s: %d of %d requests got no first delta"
                           % (label, failed[label], failed[label] + len(times[label])))
            return
    for name, fraction, target in (("p50", 0.5, 0.3), ("p99", 0.99, 1.0)):
        direct = percentile(times["upstream"], fraction)
        added = {label: percentile(times[label], fraction) - direct for label in ("nginx", "gateway")}
        r = ratio(added["gateway"], added["nginx"])
        report.line("ttft " + name, "nginx %+.2f ms  gateway %+.2f ms  ratio %.1f  (upstream alone %.2f ms, "
                    "%d rounds)" % (added["nginx"], added["gateway"], r, direct, len(times["upstream"])),
                    added["gateway"] <= target, "gateway <= +%.1f ms" % target)


def slow_reader(rig, port, headers, pid, a):
    """One client reading at 1 KiB/s, then at full speed: (RSS growth in KB of
    pid, seconds the upstream's writes blocked in the second half of the slow
    read, the response, bytes read). The first half lets the buffers on the
    way fill."""
    base = peak = rss_kb(pid)
    half = None
    response = client.Response()
    done, received = False, 0
    with socket.socket() as s:
        # a small receive window, so that what the client does not read stays on the proxy's side,
        # and an Internet-sized segment: loopback's 64 KiB one would let the proxy's kernel send
        # buffer grow to megabytes and hold the whole answer, whatever the proxy does
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1460)
        s.settimeout(0.25)
        s.connect(("127.0.0.1", port))
        s.sendall(client.request("/slow", headers))
        start = time.monotonic()
        while not done and time.monotonic() - start < a.slow_seconds:
            allowed = int((time.monotonic() - start) * KIB) - received
            if allowed > 0:
                try:
                    data = s.recv(min(allowed, 512))
                except socket.timeout:
                    data = None
                if data == b"":
                    break
                if data:
                    received += len(data)
                    done = response.feed(data, time.monotonic())
            time.sleep(0.05)
            peak = max(peak, rss_kb(pid))
            if half is None and time.monotonic() - start >= a.slow_seconds / 2:
                half = http_get(rig.ports["fast"], "/stats")["blocked_seconds"]
        # an answer that ended (or failed) within the first half made the upstream wait for nothing
        blocked = http_get(rig.ports["fast"], "/stats")["blocked_seconds"] - half if half is not None else 0.0
        # then at full speed: the terminal frame must still come
        deadline = time.monotonic() + a.phase_deadline
        while not done and time.monotonic() < deadline:
            try:
                data = s.recv(65536)
            except socket.timeout:
                continue
            if not data:
                break
            received += len(data)
            done = response.feed(data, time.monotonic())
    return peak - base, blocked, response if done else None, received


def phase_slow(rig, report, a):
    growth, blocked, verdict = {}, {}, {}
    for label, port, headers, pid in rig.targets():
        try:
            growth[label], blocked[label], response, received = slow_reader(rig, port, headers, pid, a)
        except OSError as e:
            report.problem("slow", "%s: not a figure: %s" % (label, e.strerror or e))
            return
        verdict[label] = ("delivered (%d KB read)" % (received // KIB) if response and not response.verdict()
                          else "missing: " + (response.verdict() if response else "answer cut"))
        if not verdict[label].startswith("delivered"):
            report.problems.append("slow")
    report.line("slow RSS", "nginx %+d KB  gateway %+d KB  while read at 1 KiB/s for %d s"
                % (growth["nginx"], growth["gateway"], a.slow_seconds),
                growth["gateway"] <= 8 * KIB, "gateway <= 8 MiB, the writer's bound")
    # a moment's wait for a full socket is no pause: the reader must hold the upstream most of the time
    half = a.slow_seconds / 2
    report.line("slow pause", "upstream writes blocked: nginx %.1f s  gateway %.1f s  of the last %.0f s"
                % (blocked["nginx"], blocked["gateway"], half),
                blocked["gateway"] >= 0.8 * half, "upstream paused >= 80 % of it")
    report.line("slow end", "terminal frame: nginx %s  gateway %s" % (verdict["nginx"], verdict["gateway"]),
                verdict["gateway"].startswith("delivered"), "delivered")


def phase_idle(rig, report, a):
    n = a.idle_streams
    figures = {}
    for label, port, headers, pid in rig.targets():
        base = rss_kb(pid)
        load = client.Load(port, "/idle", headers)
        start = time.monotonic()
        # streams arrive over a couple of seconds, as clients do, not in one burst
        while len(load.streams) < n and time.monotonic() - start < a.idle_deadline:
            load.open(min(IDLE_BATCH, n - len(load.streams)))
            load.pump(0.05)
        load.pump(a.idle_deadline - (time.monotonic() - start), until=lambda: load.deltas >= n)
        first = load.count(lambda r: r.deltas >= 1)
        first_seconds = time.monotonic() - start
        time.sleep(1)
        held = rss_kb(pid)
        nudged = http_get(rig.ports["idle"], "/nudge")["nudged"]
        load.pump(a.phase_deadline, until=lambda: load.count(lambda r: r.deltas >= 2) >= first)
        flowing = load.count(lambda r: r.deltas >= 2)
        load.close_all()
        # settled: the proxy has closed its upstream streams
        deadline = time.monotonic() + a.phase_deadline
        while time.monotonic() < deadline and http_get(rig.ports["idle"], "/stats")["streams"]:
            time.sleep(0.25)
        time.sleep(2)
        after = rss_kb(pid)
        figures[label] = (first, flowing, (held - base) / n, 100.0 * (after - base) / base)
        report.line("idle", "%-7s %d/%d got their first delta in %.1f s, %d of them flowed on a new event "
                    "(%d upstream streams nudged)" % (label, first, n, first_seconds, flowing, nudged),
                    first == n and flowing == n, "all %d flowing" % n)
        if first < n or flowing < first:
            report.problems.append("idle")
    if len(figures) == 2:
        # memory per stream and after close only count when every stream was held
        held_all = figures["gateway"][0] == n
        kb = {label: f[2] for label, f in figures.items()}
        report.line("idle KB", "nginx %.1f KB/stream  gateway %.1f KB/stream  ratio %.2f  (RSS held minus "
                    "baseline, per stream opened)" % (kb["nginx"], kb["gateway"], ratio(kb["gateway"], kb["nginx"])),
                    held_all and kb["gateway"] <= 14, "gateway <= 14 KB, all held")
        after = {label: f[3] for label, f in figures.items()}
        report.line("idle RSS", "after close: nginx %+.1f %%  gateway %+.1f %% of its baseline"
                    % (after["nginx"], after["gateway"]), held_all and after["gateway"] <= 10,
                    "gateway within 10 %, all held")


RUNS = {"burst": phase_burst, "paced": phase_paced, "ttft": phase_ttft, "slow": phase_slow, "idle": phase_idle}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("build", help="a meson build folder of the project (release build for figures worth citing)")
    p.add_argument("--phases", default=",".join(RUNS), help="comma-separated, of: " + ", ".join(RUNS))
    p.add_argument("--smoke", action="store_true",
                   help="every phase for a couple of seconds with small counts; the exit status says whether "
                        "each produced a figure and every stream ended correctly")
    p.add_argument("--deltas", type=int, default=200, help="text deltas of the answer (default 200)")
    p.add_argument("--idle-streams", type=int, default=8000, help="streams the idle phase holds (default 8000)")
    p.add_argument("--slow-seconds", type=int, default=30,
                   help="seconds the slow client reads at 1 KiB/s before it reads the rest at full speed")
    a = p.parse_args()
    a.phases = [x for x in a.phases.split(",") if x]
    unknown = set(a.phases) - set(RUNS)
    if unknown:
        p.error("unknown phase: " + ", ".join(sorted(unknown)))
    a.seconds, a.warmup, a.ramp, a.phase_deadline = 10, 3, 3, 30
    a.paced_streams, a.ttft_rounds, a.slow_deltas = 400, 300, 2000
    if a.smoke:
        a.seconds, a.warmup, a.ramp, a.phase_deadline = 2, 0, 1, 20
        # a short answer, so that paced streams end within the run
        a.deltas = min(a.deltas, 20)
        a.paced_streams, a.ttft_rounds = 20, 30
        a.idle_streams, a.slow_seconds = min(a.idle_streams, 100), 2
    a.idle_deadline = a.phase_deadline / 2 + a.idle_streams / 400
    return a


def find_tools(build):
    """The full path of each program the run needs, by name."""
    binary = os.path.join(build, "gateway", "symfonic-gateway")
    if not os.access(binary, os.X_OK):
        raise SetupError("no gateway in %s: build it first (ninja -C %s)" % (build, build))
    # nginx is in /usr/sbin, which a user's PATH often leaves out
    path = os.environ.get("PATH", os.defpath) + ":/usr/sbin:/sbin"
    tools = {"symfonic-gateway": binary}
    for tool, package in (("nginx", "nginx-light"), ("wrk", "wrk"), ("taskset", "util-linux")):
        tools[tool] = shutil.which(tool, path=path)
        if not tools[tool]:
            raise SetupError("%s not found: install the Debian package %s" % (tool, package))
    return tools


def main():
    a = parse_args()
    build = os.path.abspath(a.build)
    # every stream is a socket here, two in each proxy: take the hard limit, and
    # shrink the idle phase to what it allows (its children inherit the limit)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    a.files = hard
    fit = (hard - 1024) // 2
    if "idle" in a.phases and a.idle_streams > fit:
        print("the open-file hard limit is %d: the idle phase holds %d streams, not %d"
              % (hard, fit, a.idle_streams))
        a.idle_streams = fit
    rig = None
    report = Report()
    try:
        rig = Rig(find_tools(build), a)
        rig.start()
        print("answer: %d text deltas, %d bytes (slow: %d long ones, %d bytes); %s"
              % (a.deltas, rig.answer_bytes, a.slow_deltas,
                 sum(map(len, answer.events(a.slow_deltas, SLOW_WORDS))), rig.pinning), flush=True)
        for phase in a.phases:
            try:
                RUNS[phase](rig, report, a)
            except OSError:
                # a process it measures or talks to went away: say which
                rig.check_alive()
                raise
            rig.check_alive()
    except SetupError as e:
        print("bench: %s" % e, file=sys.stderr)
        return 2
    finally:
        if rig:
            rig.stop()
    met = sum(report.met)
    print("summary: %d of %d figures meet their target%s" % (
        met, len(report.met), "; no figure from: " + ", ".join(sorted(set(report.problems)))
        if report.problems else ""))
    if a.smoke:
        print("smoke: " + ("FAILED" if report.problems else "every phase gave a figure, every stream ended right"))
        return 1 if report.problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
