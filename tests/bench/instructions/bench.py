#!/usr/bin/env python3
"""User-space instructions per request, counted by callgrind: the typed
route over the runtime source and the openai route over the openai source,
each in front of the same static 200-delta answer as provider-compare/.
Unlike a rate, the count does not move with what else the machine does,
so two builds compare to the tenth of a percent. See tests/bench/README.md.

    bench.py BUILD_DIR [BUILD_DIR ...] [--requests N]

Each build's gateway runs under callgrind twice per route, serving a few
requests and then N more on one kept-alive connection; the difference over
N is what one request costs, start-up and shut-down left out. Needs
valgrind, nginx (Debian: nginx-light) and python3."""
import argparse, http.client, importlib.util, json, os, shutil, signal, subprocess, sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("provider_compare",
                                               os.path.join(HERE, "..", "provider-compare", "bench.py"))
provider = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(provider)
harness = provider.harness

FEW = 10
ROUTES = {
    "typed": ("/typed", json.dumps({"query": "Why is the sky blue?"}).encode()),
    "openai": (provider.PATH, provider.BODY),
}
HEADERS = {"Authorization": "Bearer demo-token-alice", "X-Tenant-ID": "acme",
           "Content-Type": "application/json"}


def data_dir(build):
    """The data folder of the tree @build was configured from: an older
    build may not know the codes a newer error table names."""
    with open(os.path.join(build, "meson-info", "meson-info.json")) as f:
        return os.path.join(json.load(f)["directories"]["source"], "data")


class Rig(provider.Rig):
    """provider-compare's upstream, a gateway with both routes."""

    def pipeline(self, build):
        data = data_dir(build)
        text = ("[gateway]\nlisten=127.0.0.1:%d\nworkers=1\n"
                "\n[route:typed]\npath=/typed\nkind=typed\nsource=typed\nstages=%s\n"
                "\n[source:typed]\ntype=runtime\nurl=http://127.0.0.1:%d/typed\n"
                "\n[route:openai]\npath=/v1\nkind=openai\nsource=openai\nstages=%s\n"
                "\n[source:openai]\ntype=openai\nbase-url=http://127.0.0.1:%d/v1\nmodel=gpt-bench\n"
                "\n[stage:auth]\ntype=auth\ntokens-file=%s\n"
                "\n[stage:rate-limit]\ntype=rate-limit\nkey=tenant-principal\nrate=1000000\nburst=1000000\n"
                "\n[stage:budget]\ntype=budget\ntokens-per-window=1000000000000000\nwindow-seconds=60\n"
                "reserve-tokens=1\n"
                "\n[stage:extraction]\ntype=extraction\n\n[stage:citation]\ntype=citation\n"
                "\n[stage:errors]\ntype=error-map\ntable=%s\n"
                % (self.ports["gateway"], provider.STAGES, self.ports["static"], provider.STAGES,
                   self.ports["static"], os.path.join(data, "demo-tokens.ini"),
                   os.path.join(data, "error-map.ini")))
        return self.write("instructions.pipeline", text.encode())

    def start_upstream(self):
        self.nginx("nginx-static", os.path.join(HERE, "..", "provider-compare", "static.conf.in"),
                   {"PORT": self.ports["static"],
                    "OPENAI": self.write("openai.sse", provider.openai_answer(provider.DELTAS)),
                    "TYPED": self.write("typed.sse", b"".join(provider.answer.events(provider.DELTAS)))},
                   proxy=False)

    def count(self, build, route, requests):
        """Instructions of one gateway process that served @requests."""
        out = os.path.join(self.dir, "callgrind.out")
        log = open(os.path.join(self.dir, "gateway under callgrind.log"), "wb")
        gateway = subprocess.Popen(
            [self.tools["valgrind"], "--tool=callgrind", "--callgrind-out-file=" + out,
             os.path.join(build, "gateway", "symfonic-gateway"), "--pipeline", self.pipeline(build)],
            stdout=log, stderr=subprocess.STDOUT, cwd=self.dir,
            # as the gateway would set it itself, by restarting, which
            # callgrind cannot follow
            env=dict(os.environ, G_SLICE="always-malloc"))
        log.close()
        gateway.name = "gateway under callgrind"
        try:
            self.wait_port(gateway, self.ports["gateway"], seconds=120)
            path, body = ROUTES[route]
            connection = http.client.HTTPConnection("127.0.0.1", self.ports["gateway"], timeout=120)
            for _ in range(requests):
                connection.request("POST", path, body, HEADERS)
                response = connection.getresponse()
                data = response.read()
                if response.status != 200 or not data:
                    raise harness.SetupError("%s answered %d" % (route, response.status))
            connection.close()
        finally:
            gateway.send_signal(signal.SIGTERM)
            gateway.wait(120)
        with open(out) as f:
            for line in f:
                if line.startswith(("summary:", "totals:")):
                    return int(line.split()[1])
        raise harness.SetupError("callgrind wrote no total")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("builds", nargs="+")
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    tools = {name: shutil.which(name) for name in ("nginx", "valgrind", "taskset")}
    tools["nginx"] = tools["nginx"] or shutil.which("nginx", path="/usr/sbin:/sbin")
    for name, package in (("nginx", "nginx-light"), ("valgrind", "valgrind")):
        if tools[name] is None:
            print("%s is needed (Debian: apt-get install %s)" % (name, package))
            return 2
    rig = Rig(os.path.abspath(args.builds[0]), tools)
    first = {}
    try:
        rig.start_upstream()
        for build in args.builds:
            build = os.path.abspath(build)
            for route in ROUTES:
                few = rig.count(build, route, FEW)
                many = rig.count(build, route, FEW + args.requests)
                per_request = (many - few) / args.requests
                first.setdefault(route, per_request)
                print("%-7s %-40s %12.0f instructions per request  (%+.2f %% against the first build)"
                      % (route, os.path.relpath(build), per_request,
                         100.0 * (per_request / first[route] - 1)))
                sys.stdout.flush()
    except harness.SetupError as e:
        print("setup failed: %s" % e)
        return 2
    finally:
        rig.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
