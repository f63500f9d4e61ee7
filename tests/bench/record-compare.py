#!/usr/bin/env python3
"""What recording costs: the gateway's CPU time per upstream text delta on
400 paced streams, its runtime source recording every run (record=) and
not recording, in one run, rounds alternating so that drift hits both.

    record-compare.py BUILD_DIR [--rounds N] [--streams N] [--seconds S] [--folder DIR] [--smoke]

The paced upstream and the client are nginx-compare's (upstream.py,
client.py): each stream is the 200-delta typed answer, one HTTP chunk per
event every 50 ms. The gateway is the build's binary, one worker, pinned
to its own core where there are two, with the default stages. Prints each
round's figures, then the ratio of the medians, recording on over off,
against the target (<= 1.05), and how many runs were recorded and
dropped. The recordings go to a temporary folder, or to --folder (a
file system's cost of creating a file per run is part of the figure). Needs python3 and taskset; everything listens on 127.0.0.1."""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "nginx-compare"))
import bench as nginx_compare  # noqa: E402
import client  # noqa: E402

DATA = os.path.normpath(os.path.join(HERE, "..", "..", "data"))
AUTH = ("Authorization: Bearer demo-token-alice", "X-Tenant-ID: acme")
STAGES = "auth;rate-limit;budget;release-line;extraction;citation;errors"
INTERVAL_MS = 50
DELTAS = 200
TARGET = 1.05


def pipeline(folder, gateway_port, upstream_port, record):
    text = ("[gateway]\nlisten=127.0.0.1:%d\nworkers=1\n\n"
            "[route:paced]\npath=/paced\nkind=typed\nsource=paced\nstages=%s\n\n"
            "[source:paced]\ntype=runtime\nurl=http://127.0.0.1:%d/\n"
            % (gateway_port, STAGES, upstream_port))
    if record:
        text += "record=%s\n" % record
    text += """
[stage:auth]
type=auth
tokens-file=%s

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
    path = os.path.join(folder, "record-%s.pipeline" % ("on" if record else "off"))
    with open(path, "w") as f:
        f.write(text)
    return path


def get_text(port, path):
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path)
    body = connection.getresponse().read().decode()
    connection.close()
    return body


def measure(a, binary, folder, upstream_port, record, pin):
    """One round: a fresh gateway, the streams opened and ramped, then the
    gateway's CPU seconds over the upstream's deltas for a.seconds."""
    port = nginx_compare.free_port()
    argv = [binary, "--pipeline", pipeline(folder, port, upstream_port, record)]
    if pin:
        argv = ["taskset", "-c", "1"] + argv
    log = open(os.path.join(folder, "gateway-%s.log" % ("on" if record else "off")), "ab")
    process = subprocess.Popen(argv, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                get_text(port, "/healthz")
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit("record-compare: the gateway did not start (see %s)" % log.name)
                time.sleep(0.05)
        load = client.Load(port, "/paced", AUTH, repeat=True)
        load.open(a.streams)
        load.pump(a.ramp)
        cpu = nginx_compare.proc_stat(process.pid)
        sent = nginx_compare.http_get(upstream_port, "/stats")["deltas"]
        seen = load.deltas
        start = time.monotonic()
        load.pump(a.seconds)
        elapsed = time.monotonic() - start
        cpu = nginx_compare.proc_stat(process.pid) - cpu
        sent = nginx_compare.http_get(upstream_port, "/stats")["deltas"] - sent
        seen = load.deltas - seen
        load.close_all()
        dropped = written = None
        metrics = get_text(port, "/metrics")
        for line in metrics.splitlines():
            if line.startswith("symfonic_recordings_written_total "):
                written = float(line.split()[1])
            if line.startswith("symfonic_recordings_dropped_total "):
                dropped = float(line.split()[1])
        if load.failures or not sent:
            raise SystemExit("record-compare: round failed: %d deltas, failures %s" % (sent, load.failures))
        return {"us_per_delta": cpu / sent * 1e6, "busy": 100 * cpu / elapsed, "sent": sent, "seen": seen,
                "written": written, "dropped": dropped}
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("build", help="a meson build folder (a release build for figures worth citing)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of each, alternating (default 3)")
    p.add_argument("--streams", type=int, default=400, help="paced streams (default 400)")
    p.add_argument("--seconds", type=int, default=10, help="seconds measured per round (default 10)")
    p.add_argument("--folder", help="where the recordings go (default: a temporary folder, removed after)")
    p.add_argument("--smoke", action="store_true", help="20 streams, 2 s, one round of each")
    a = p.parse_args()
    a.ramp = 3
    if a.smoke:
        a.rounds, a.streams, a.seconds, a.ramp = 1, 20, 2, 1
    binary = os.path.join(os.path.abspath(a.build), "gateway", "symfonic-gateway")
    if not os.access(binary, os.X_OK):
        print("record-compare: no gateway in %s" % a.build, file=sys.stderr)
        return 2
    pin = (os.cpu_count() or 1) >= 2 and shutil.which("taskset") is not None
    folder = tempfile.mkdtemp(prefix="record-compare-")
    recordings = tempfile.mkdtemp(prefix="recordings-", dir=a.folder) if a.folder else os.path.join(folder, "recordings")
    if not a.folder:
        os.mkdir(recordings)
    upstream_port = nginx_compare.free_port()
    upstream_argv = [sys.executable, "-B", os.path.join(HERE, "nginx-compare", "upstream.py"), "paced",
                     str(upstream_port), str(DELTAS), str(INTERVAL_MS)]
    if pin:
        upstream_argv = ["taskset", "-c", "0"] + upstream_argv
    upstream = subprocess.Popen(upstream_argv, cwd=os.path.join(HERE, "nginx-compare"))
    figures = {"off": [], "on": []}
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                nginx_compare.http_get(upstream_port, "/stats")
                break
            except OSError:
                if time.monotonic() > deadline:
                    print("record-compare: the upstream did not start", file=sys.stderr)
                    return 2
                time.sleep(0.05)
        print("%d paced streams, %d deltas every %d ms each, %d s per round; %s"
              % (a.streams, DELTAS, INTERVAL_MS, a.seconds,
                 "gateway pinned to core 1, upstream and client to core 0" if pin else "nothing pinned"),
              flush=True)
        for round_ in range(a.rounds):
            for label in ("off", "on"):
                f = measure(a, binary, folder, upstream_port, recordings if label == "on" else None, pin)
                figures[label].append(f)
                print("round %d, recording %-3s %.2f us/delta  (busy %.0f %%, %d upstream deltas%s)"
                      % (round_ + 1, label, f["us_per_delta"], f["busy"], f["sent"],
                         ", %d runs recorded, %d dropped" % (f["written"] or 0, f["dropped"] or 0)
                         if label == "on" else ""), flush=True)
        off = statistics.median(f["us_per_delta"] for f in figures["off"])
        on = statistics.median(f["us_per_delta"] for f in figures["on"])
        files = len([n for n in os.listdir(recordings) if n.endswith(".jsonl") and not n.startswith(".")])
        ratio = on / off
        print("record    off %.2f us/delta  on %.2f us/delta  ratio %.3f  (medians of %d rounds; %d recordings "
              "written)  (target <= %.2f: %s)"
              % (off, on, ratio, a.rounds, files, TARGET, "met" if ratio <= TARGET else "missed"))
        if a.smoke:
            ok = files > 0 and all(f["sent"] > 0 for v in figures.values() for f in v)
            print("smoke: " + ("every round gave a figure, runs were recorded" if ok else "FAILED"))
            return 0 if ok else 1
        return 0
    finally:
        upstream.terminate()
        try:
            upstream.wait(10)
        except subprocess.TimeoutExpired:
            upstream.kill()
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(recordings, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
