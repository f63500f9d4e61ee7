#!/usr/bin/env python3
"""The gateway's `openai` route next to nginx as a pure proxy and the
@portkey-ai/gateway npm package, all in front of one static 200-delta
OpenAI-format answer. Prints streams/s of each with the ratios to their
targets, and the time to first token each adds. See tests/bench/README.md.

    bench.py BUILD_DIR [--seconds N] [--rounds N] [--smoke]

Needs nginx (Debian: nginx-light), wrk, node and npm (Portkey is installed
into BUILD_DIR at the first run; without node the Portkey figures are
skipped, saying so). Each proxy gets one core of its own; everything
listens on 127.0.0.1 on ports picked at run time, and every process it
starts is stopped by its own pid."""
import argparse, importlib.util, json, os, shutil, socket, statistics, subprocess, sys, time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
NGINX_COMPARE = os.path.join(HERE, "..", "nginx-compare")
sys.path.insert(0, NGINX_COMPARE)
import answer  # noqa: E402 (the typed answer, for a gateway without the openai source)

# the nginx comparison's harness: its processes, nginx, wrk and figures
_spec = importlib.util.spec_from_file_location("nginx_compare", os.path.join(NGINX_COMPARE, "bench.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)

DATA = os.path.normpath(os.path.join(HERE, "..", "..", "..", "data"))
AUTH = ("Authorization: Bearer demo-token-alice", "X-Tenant-ID: acme")
STAGES = "auth;rate-limit;budget;extraction;citation;errors"
DELTAS = 200
PORTKEY_VERSION = "1.15.2"
# later versions answer every request with "TypeError: immutable"
HONO_NODE_SERVER_VERSION = "1.13.5"
# the longest a proxy is loaded before it is measured (see warm_up())
WARM_UP_SECONDS = 90
TARGET_PORTKEY = 18.0
TARGET_NGINX = 0.2
TARGET_TTFT_MS = 1.0
PATH = "/v1/chat/completions"
BODY = json.dumps({"model": "gpt-bench", "stream": True,
                   "messages": [{"role": "user", "content": "why is the sky blue?"}]}).encode()


WRK_ENV = {"BENCH_BODY": BODY.decode(), "BENCH_TERMINAL": "data: [DONE]"}


def openai_answer(n_deltas):
    """A static streamed chat completion: a role chunk, n_deltas content
    deltas, the finish chunk, the usage chunk and [DONE]."""
    def chunk(choices, **extra):
        data = dict(id="chatcmpl-bench", object="chat.completion.chunk", created=1700000000,
                    model="gpt-bench", choices=choices, **extra)
        return "data: %s\n\n" % json.dumps(data, separators=(",", ":"))
    words = answer.WORDS
    out = [chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    out += [chunk([{"index": 0, "delta": {"content": " " + words[i % len(words)]}, "finish_reason": None}])
            for i in range(n_deltas)]
    out.append(chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    out.append(chunk([], usage={"prompt_tokens": 12, "completion_tokens": n_deltas, "total_tokens": 12 + n_deltas}))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


class Rig(harness.Rig):
    """The nginx comparison's rig with this benchmark's upstream and proxies."""

    def __init__(self, build, tools):
        super().__init__(tools, argparse.Namespace(files=8192))
        self.build = build
        self.ports = {name: harness.free_port() for name in ("static", "nginx", "gateway", "portkey")}

    def write(self, name, data):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o644)
        return path

    def gateway_source(self):
        """The openai source once the build has it; until then the runtime
        source reading the same answer in the typed format."""
        inspect = os.path.join(self.build, "gateway", "symfonic-inspect")
        has_openai = subprocess.run([inspect, "openai"], capture_output=True).returncode == 0
        if has_openai:
            return "openai source", ("type=openai\nbase-url=http://127.0.0.1:%d/v1\nmodel=gpt-bench\n"
                                     % self.ports["static"])
        return ("runtime source (typed answer; the openai source is not in this build)",
                "type=runtime\nurl=http://127.0.0.1:%d/typed\n" % self.ports["static"])

    def start_gateway(self):
        self.source_label, source = self.gateway_source()
        text = ("[gateway]\nlisten=127.0.0.1:%d\nworkers=1\n"
                "\n[route:openai]\npath=/v1\nkind=openai\nsource=upstream\nstages=%s\n"
                "\n[source:upstream]\n%s"
                "\n[stage:auth]\ntype=auth\ntokens-file=%s\n"
                "\n# metering stays in the path but never refuses\n"
                "[stage:rate-limit]\ntype=rate-limit\nkey=tenant-principal\nrate=1000000\nburst=1000000\n"
                "\n[stage:budget]\ntype=budget\ntokens-per-window=1000000000000000\nwindow-seconds=60\n"
                "reserve-tokens=1\n"
                "\n[stage:extraction]\ntype=extraction\n\n[stage:citation]\ntype=citation\n"
                "\n[stage:errors]\ntype=error-map\ntable=%s\n"
                % (self.ports["gateway"], STAGES, source, os.path.join(DATA, "demo-tokens.ini"),
                   os.path.join(DATA, "error-map.ini")))
        pipeline = self.write("bench.pipeline", text.encode())
        gateway = self.spawn("gateway", [os.path.join(self.build, "gateway", "symfonic-gateway"),
                                         "--pipeline", pipeline], proxy=True)
        self.wait_port(gateway, self.ports["gateway"])

    def start_portkey(self):
        folder = os.path.join(self.build, "tests", "bench", "portkey")
        server = os.path.join(folder, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js")
        nested = os.path.join(folder, "node_modules", "@portkey-ai", "gateway", "node_modules")
        if (not installed(folder, "@portkey-ai/gateway", PORTKEY_VERSION) or os.path.exists(nested) or
                not installed(folder, "@hono/node-server", HONO_NODE_SERVER_VERSION)):
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            # an override, so that Portkey itself gets the pinned server, not
            # a newer copy of its own
            with open(os.path.join(folder, "package.json"), "w") as f:
                json.dump({"private": True,
                           "dependencies": {"@portkey-ai/gateway": PORTKEY_VERSION},
                           "overrides": {"@hono/node-server": HONO_NODE_SERVER_VERSION}}, f)
            subprocess.run([self.tools["npm"], "install", "--no-audit", "--no-fund", "--ignore-scripts",
                            "--prefix", folder],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        portkey = self.spawn("portkey", [self.tools["node"], server, "--port=%d" % self.ports["portkey"]],
                             proxy=True)
        self.wait_port(portkey, self.ports["portkey"])

    def start(self, portkey):
        self.nginx("nginx-static", os.path.join(HERE, "static.conf.in"),
                   {"PORT": self.ports["static"], "OPENAI": self.write("openai.sse", openai_answer(DELTAS)),
                    "TYPED": self.write("typed.sse", b"".join(answer.events(DELTAS)))}, proxy=False)
        self.nginx("nginx-proxy", os.path.join(HERE, "proxy.conf.in"),
                   {"PORT": self.ports["nginx"], "STATIC": self.ports["static"]}, proxy=True)
        self.start_gateway()
        if portkey:
            self.start_portkey()

    def targets(self):
        """(label, port, headers) of each proxy measured."""
        out = [("nginx", self.ports["nginx"], ()), ("gateway", self.ports["gateway"], AUTH)]
        if any(p.name == "portkey" for p in self.processes):
            out.append(("portkey", self.ports["portkey"],
                        ("Authorization: Bearer sk-bench", "x-portkey-provider: openai",
                         "x-portkey-custom-host: http://127.0.0.1:%d/v1" % self.ports["static"])))
        return out


def installed(folder, package, version):
    try:
        with open(os.path.join(folder, "node_modules", package, "package.json")) as f:
            return json.load(f).get("version") == version
    except OSError:
        return False


def first_token_ms(port, headers):
    """One streamed request on a fresh connection: ms until the first
    content delta arrived, or None if none did."""
    head = ("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\nConnection: close\r\n%s\r\n"
            % (len(BODY), "".join(h + "\r\n" for h in headers))).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        start = time.perf_counter()
        s.sendall(head + BODY)
        seen = b""
        while True:
            piece = s.recv(65536)
            if not piece:
                return None
            seen += piece
            if b'"content":" ' in seen:
                return 1000 * (time.perf_counter() - start)


def warm_up(label, port, headers, wrk, args):
    """Load a proxy until its streams/s stops climbing: until three
    3-second rounds in a row beat none of the rounds before them by more
    than 5 %. node compiles Portkey's hot paths over a minute or so of
    load, and a Portkey measured before that is slower than the one its
    users run; nginx and the gateway are at speed at once."""
    seconds = 3 if args.smoke else WARM_UP_SECONDS
    rates, start = [], time.monotonic()
    while True:
        rate, _ = harness.wrk(wrk, port, PATH, headers, 3, args.connections, WRK_ENV)
        rates.append(rate or 0.0)
        if time.monotonic() - start >= seconds:
            break
        if len(rates) >= 4 and max(rates[-3:]) <= 1.05 * max(rates[:-3]):
            break
    print("%-10s warmed up for %.0f s: %s streams/s" % (label, time.monotonic() - start,
                                                       " ".join("%.0f" % r for r in rates)))


def throughput(rig, wrk, args, problems):
    """Each proxy's streams/s in every round, the proxies taking turns
    within a round, so that a machine that speeds up or slows down during
    the run moves the figures of one round alike: the ratios are taken
    round by round."""
    targets = rig.targets()
    for label, port, headers in targets:
        warm_up(label, port, headers, wrk, args)
    rates = {label: [] for label, _, _ in targets}
    for _ in range(args.rounds):
        for label, port, headers in targets:
            if label not in rates:
                continue
            rate, error = harness.wrk(wrk, port, PATH, headers, args.seconds, args.connections, WRK_ENV)
            if error:
                problems.append(label)
                print("%-10s not a figure: %s" % (label, error))
                del rates[label]
            else:
                rates[label].append(rate)
    for label, values in rates.items():
        print("%-10s %.0f streams/s  (median of %s)"
              % (label, statistics.median(values), " ".join("%.0f" % v for v in values)))
    return rates


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of streams/s; each measures every proxy in turn")
    parser.add_argument("--ttft-requests", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--smoke", action="store_true", help="a seconds-long run that checks every figure comes")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.smoke:
        args.seconds, args.rounds, args.ttft_requests = 3, 1, 50

    tools = {name: shutil.which(name) for name in ("nginx", "wrk", "taskset", "node", "npm")}
    tools["nginx"] = tools["nginx"] or shutil.which("nginx", path="/usr/sbin:/sbin")
    for name, package in (("nginx", "nginx-light"), ("wrk", "wrk"), ("taskset", "util-linux")):
        if tools[name] is None:
            print("%s is needed (Debian: apt-get install %s)" % (name, package))
            return 1
    portkey = tools["node"] is not None and tools["npm"] is not None

    rig = Rig(os.path.abspath(args.build), tools)
    problems = []
    try:
        rig.start(portkey)
        print("upstream   static %d-delta OpenAI answer from nginx; gateway fed by the %s" % (DELTAS, rig.source_label))
        if not portkey:
            print("portkey    skipped: node and npm are needed")
        if rig.proxy_cpu is None:
            print("cpu        one core only: proxies share it with the load")
        rates = throughput(rig, tools["wrk"], args, problems)
        for label, r in (("nginx", TARGET_NGINX), ("portkey", TARGET_PORTKEY)):
            ratios = [g / other for g, other in zip(rates.get("gateway", ()), rates.get(label, ()))]
            if ratios:
                m = statistics.median(ratios)
                print("ratio      gateway/%s %.2f  (median of %s; target >= %.2f: %s)"
                      % (label, m, " ".join("%.2f" % x for x in ratios), r, "met" if m >= r else "missed"))

        # one request to each in turn, so that drift hits all three alike
        ttft, order = {}, (("direct", rig.ports["static"], ()),) + tuple(rig.targets()[:2])
        times = {label: [] for label, _, _ in order}
        for _ in range(args.ttft_requests):
            for label, port, headers in order:
                times[label].append(first_token_ms(port, headers))
        for label, _, _ in order:
            if None in times[label]:
                problems.append("ttft-" + label)
                print("ttft       %s: a stream gave no content delta" % label)
                continue
            ttft[label] = (harness.percentile(times[label], 0.5), harness.percentile(times[label], 0.99))
            print("ttft       %-8s p50 %.3f ms  p99 %.3f ms" % (label, ttft[label][0], ttft[label][1]))
        if "direct" in ttft and "gateway" in ttft:
            added = ttft["gateway"][1] - ttft["direct"][1]
            print("ttft       gateway adds %.3f ms at p99  (target <= %.1f ms: %s)"
                  % (added, TARGET_TTFT_MS, "met" if added <= TARGET_TTFT_MS else "missed"))
    except (harness.SetupError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        print("setup failed: %s" % e)
        return 1
    finally:
        rig.stop()

    # the smoke run judges that every figure came, not the speeds
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
