#!/usr/bin/python3
# serve.py: serves a pipeline file from Python, with a stage of its own
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
#   serve.py PIPELINE [--listen HOST:PORT]
#
# Defines the `tenant-tally` stage, which pipelines use by `type=` next to
# the built-in stages: it numbers each tenant's streams in a response header
# and logs every stream's deltas when it finishes. SIGINT or SIGTERM drain
# the server (a second one ends the streams left), SIGHUP reloads the file.

import argparse
import signal
import sys
import threading

import gi

gi.require_version('GLib', '2.0')
gi.require_version('Gio', '2.0')
gi.require_version('Symfonic', '1.0')
from gi.repository import GLib, GObject, Gio, Symfonic  # noqa: E402

PROGRAM = 'serve.py'


class _Tally(GObject.Object):
    """One stream's count, kept in the stream."""

    def __init__(self, tenant, number):
        super().__init__()
        self.tenant = tenant
        self.number = number
        self.deltas = 0
        self.characters = 0


class TenantTally(GObject.Object, Symfonic.Stage):
    """Numbers each tenant's streams and logs what every stream answered."""

    __gtype_name__ = 'ServeTenantTally'

    header = GObject.Property(type=str, default='X-Tenant-Streams', nick='Header',
                              blurb="Response header carrying the number of the tenant's stream")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # the hooks run on every worker thread
        self._lock = threading.Lock()
        self._streams = {}

    def do_admit(self, stream):
        tenant = stream.get_invocation().get_tenant_id() or '-'
        with self._lock:
            number = self._streams.get(tenant, 0) + 1
            self._streams[tenant] = number
        stream.set_stage_state(self, _Tally(tenant, number))
        stream.set_response_header(self.header, str(number))
        return True

    def do_process(self, stream, event):
        if event.get_kind() == Symfonic.EventKind.TEXT_DELTA:
            tally = stream.get_stage_state(self)
            tally.deltas += 1
            text, _ = event.get_text()
            tally.characters += len(text)
        stream.emit(event)
        return True

    def do_finish(self, stream):
        tally = stream.get_stage_state(self)
        print('tenant-tally: tenant %s, stream %d: %d deltas, %d characters'
              % (tally.tenant, tally.number, tally.deltas, tally.characters), flush=True)
        return True


class Service:
    def __init__(self, server, display):
        self.server = server
        self.display = display
        self.loop = GLib.MainLoop()
        # cancelled at a second stop signal: the drain ends streams at once
        self.hurry = Gio.Cancellable()
        self.stopping = False

    def on_stop(self):
        if self.stopping:
            self.hurry.cancel()
            return GLib.SOURCE_CONTINUE
        self.stopping = True
        print('%s: shutting down' % PROGRAM, flush=True)
        self.server.drain_async(self.hurry, self.on_drained)
        return GLib.SOURCE_CONTINUE

    def on_drained(self, server, result):
        server.drain_finish(result)
        self.loop.quit()

    def on_reload(self):
        if self.stopping:
            return GLib.SOURCE_CONTINUE
        try:
            self.server.reload(Symfonic.Registry.get_default())
            print('%s: reloaded %s' % (PROGRAM, self.display), flush=True)
        except GLib.Error as error:
            print('%s: reload refused, still serving the previous pipeline: %s'
                  % (PROGRAM, error.message), file=sys.stderr, flush=True)
        return GLib.SOURCE_CONTINUE

    def run(self):
        for signum, handler in ((signal.SIGINT, self.on_stop), (signal.SIGTERM, self.on_stop),
                                (signal.SIGHUP, self.on_reload)):
            # Python's own SIGINT handler would take the signal from GLib
            signal.signal(signum, signal.SIG_DFL)
            GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signum, handler)
        print('%s: serving %s on %s' % (PROGRAM, self.display, self.server.dup_uri()), flush=True)
        self.loop.run()
        self.server.stop()


def main():
    parser = argparse.ArgumentParser(prog=PROGRAM, description='Serve a pipeline file.')
    parser.add_argument('pipeline', help='the pipeline file')
    parser.add_argument('--listen', metavar='HOST:PORT',
                        help="serve there instead of the pipeline's [gateway] listen")
    args = parser.parse_args()

    Symfonic.register_stage_type(TenantTally.__gtype__, 'tenant-tally')
    registry = Symfonic.Registry.get_default()
    file = Gio.File.new_for_commandline_arg(args.pipeline)
    try:
        registry.scan()
        pipeline = Symfonic.Pipeline.new_from_file(registry, file)
        server = Symfonic.Server.new(pipeline)
        if args.listen is not None:
            server.set_listen(args.listen)
        server.start()
    except GLib.Error as error:
        # a pipeline's error names its file, line and key
        print('%s: %s' % (PROGRAM, error.message), file=sys.stderr)
        return 1

    Service(server, file.get_parse_name()).run()
    return 0


if __name__ == '__main__':
    sys.exit(main())
