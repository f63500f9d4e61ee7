"""A typed-SSE upstream for the benchmark, one of three kinds:

  upstream.py paced PORT N_DELTAS INTERVAL_MS   the answer, one event per chunk every INTERVAL_MS
  upstream.py idle PORT                         one delta, then the stream is held open
  upstream.py fast PORT N_DELTAS WORDS          the answer, deltas of up to WORDS words, as fast as
                                                the reader takes it

Every kind answers any POST with its stream (HTTP/1.1, chunked, keep-alive) and two control requests:
GET /stats (JSON: streams open, text deltas written, seconds its writes waited for a full
socket) and, for idle, GET /nudge (sends one more delta to every held stream and answers how
many). The fast kind keeps a small send buffer and waits for the socket after each event, so
a reader that stops reading pauses it and the time it waited is what /stats reports."""
import asyncio, json, resource, socket, sys, time

import answer

CHUNK_END = b"0\r\n\r\n"
HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n")
SEND_BUFFER = 8192
HOLD_SECONDS = 900


def chunk(data):
    return b"%x\r\n%s\r\n" % (len(data), data)


class Upstream:
    def __init__(self, kind, n_deltas, interval, words):
        self.kind = kind
        self.interval = interval
        frames = answer.events(n_deltas, words) if n_deltas else []
        self.chunks = [(chunk(f), f.startswith(b"event: TextDeltaEvent")) for f in frames]
        self.held = set()
        self.streams = 0
        self.deltas = 0
        self.blocked = 0.0
        self.waiting = {}

    async def handle(self, reader, writer):
        if self.kind == "fast":
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
            writer.transport.set_write_buffer_limits(high=0)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                await reader.readexactly(length)
                target = head.split(b" ", 2)[:2]
                if target[0] == b"GET":
                    writer.write(self.control(target[1]))
                    await writer.drain()
                    break
                self.streams += 1
                try:
                    await getattr(self, self.kind)(reader, writer)
                finally:
                    self.streams -= 1
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        writer.close()

    def control(self, path):
        if path == b"/nudge":
            for w in self.held:
                w.write(chunk(answer.frame("TextDeltaEvent", {"text": " again"})))
            body = {"nudged": len(self.held)}
        else:
            now = time.monotonic()
            blocked = self.blocked + sum(now - since for since in self.waiting.values())
            body = {"streams": self.streams, "deltas": self.deltas, "blocked_seconds": round(blocked, 3)}
        data = json.dumps(body).encode()
        return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(data), data))

    async def paced(self, reader, writer):
        writer.write(HEAD)
        for c, is_delta in self.chunks:
            if writer.is_closing():
                raise ConnectionResetError
            writer.write(c)
            self.deltas += is_delta
            await asyncio.sleep(self.interval)
        writer.write(CHUNK_END)

    async def fast(self, reader, writer):
        writer.write(HEAD)
        for c, _ in self.chunks:
            writer.write(c)
            if writer.transport.get_write_buffer_size():
                self.waiting[writer] = time.monotonic()
                try:
                    await writer.drain()
                finally:
                    self.blocked += time.monotonic() - self.waiting.pop(writer)
        writer.write(CHUNK_END)
        await writer.drain()

    async def idle(self, reader, writer):
        writer.write(HEAD + chunk(answer.frame("TextDeltaEvent", {"text": "hello"})))
        self.held.add(writer)
        try:
            # A proxy sends nothing more on a connection whose answer is still
            # running: the read ends when it closes the stream.
            await asyncio.wait_for(reader.read(1), HOLD_SECONDS)
            raise ConnectionResetError
        except asyncio.TimeoutError:
            pass
        finally:
            self.held.discard(writer)
        writer.write(chunk(answer.frame("ResponseCompleteEvent", {"text": "hello", "duration_ms": 1}))
                     + CHUNK_END)


async def serve(upstream, port):
    server = await asyncio.start_server(upstream.handle, "127.0.0.1", port, backlog=8192)
    async with server:
        await server.serve_forever()


def main():
    kind, port = sys.argv[1], int(sys.argv[2])
    n_deltas = int(sys.argv[3]) if kind != "idle" else 0
    interval = float(sys.argv[4]) / 1000 if kind == "paced" else 0
    words = int(sys.argv[4]) if kind == "fast" else answer.WORDS_PER_DELTA
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(serve(Upstream(kind, n_deltas, interval, words), port))


if __name__ == "__main__":
    main()
