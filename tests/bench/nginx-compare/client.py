"""A raw HTTP/1.1 client for the benchmark: many streaming POSTs on one epoll
selector, each parsed incrementally (chunked or Content-Length) into SSE
events, counting text deltas and checking that every answer ends with its
one ResponseCompleteEvent. Kept to plain sockets so that the load it puts on
the loader's core stays small next to what it measures."""
import selectors, socket, time

BODY = b'{"query":"why is the sky blue?","session_id":"bench"}'
HEAD, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, TRAILER, LENGTH, DONE = range(7)


def request(path, headers):
    return (b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n%s\r\n%s"
            % (path.encode(), len(BODY), b"".join(h.encode() + b"\r\n" for h in headers), BODY))


class Response:
    """One response, fed the bytes read as they come."""

    def __init__(self):
        self.state = HEAD
        self.buf = b""
        self.left = 0
        self.tail = b""
        self.status = 0
        self.deltas = 0
        self.first_delta = None
        self.terminal = None

    def feed(self, data, now):
        """Consumes data; True once the response is complete."""
        self.buf += data
        while True:
            if self.state == HEAD:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    return False
                lines = self.buf[:end].split(b"\r\n")
                self.buf = self.buf[end + 4:]
                self.status = int(lines[0].split(b" ", 2)[1])
                self.state, self.left = LENGTH, 0
                for line in lines[1:]:
                    name, _, value = line.partition(b":")
                    name, value = name.strip().lower(), value.strip().lower()
                    if name == b"transfer-encoding" and value == b"chunked":
                        self.state = CHUNK_SIZE
                    elif name == b"content-length":
                        self.left = int(value)
            elif self.state == CHUNK_SIZE:
                end = self.buf.find(b"\r\n")
                if end < 0:
                    return False
                self.left = int(self.buf[:end].split(b";")[0], 16)
                self.buf = self.buf[end + 2:]
                self.state = CHUNK_DATA if self.left else TRAILER
            elif self.state in (CHUNK_DATA, LENGTH):
                piece = self.buf[:self.left]
                self.buf = self.buf[len(piece):]
                self.left -= len(piece)
                self.body(piece, now)
                if self.left:
                    return False
                if self.state == LENGTH:
                    self.state = DONE
                    return True
                self.state = CHUNK_END
            elif self.state == CHUNK_END:
                if len(self.buf) < 2:
                    return False
                self.buf = self.buf[2:]
                self.state = CHUNK_SIZE
            elif self.state == TRAILER:
                end = self.buf.find(b"\r\n")
                if end < 0:
                    return False
                line, self.buf = self.buf[:end], self.buf[end + 2:]
                if not line:
                    self.state = DONE
                    return True
            else:
                return True

    def body(self, data, now):
        frames = (self.tail + data).split(b"\n\n")
        self.tail = frames.pop()
        for frame in frames:
            start = frame.find(b"event: ")
            if start < 0:
                continue
            end = frame.find(b"\n", start)
            name = frame[start + 7:end if end >= 0 else len(frame)]
            if name == b"TextDeltaEvent":
                self.deltas += 1
                if self.first_delta is None:
                    self.first_delta = now
            elif name in (b"ResponseCompleteEvent", b"error"):
                self.terminal = name.decode() if self.terminal is None else "second terminal"

    def verdict(self):
        """None for a complete, correct answer, else what was wrong with it."""
        if self.status != 200:
            return "status %d" % self.status
        if self.terminal != "ResponseCompleteEvent":
            return "ended with %s" % (self.terminal or "no terminal")
        return None


class Stream:
    __slots__ = ("sock", "response", "closed")

    def __init__(self, sock):
        self.sock = sock
        self.response = Response()
        self.closed = False


class Load:
    """N connections to one URL path; with repeat, each POSTs again on the same
    connection as soon as its answer is complete (keep-alive)."""

    def __init__(self, port, path, headers, repeat=False):
        self.address = ("127.0.0.1", port)
        self.request = request(path, headers)
        self.repeat = repeat
        self.selector = selectors.DefaultSelector()
        self.streams = []
        self.deltas = 0
        self.completed = 0
        self.failures = {}

    def open(self, n):
        for _ in range(n):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.connect_ex(self.address)
            stream = Stream(sock)
            self.streams.append(stream)
            self.selector.register(sock, selectors.EVENT_WRITE, stream)

    def fail(self, stream, reason):
        self.failures[reason] = self.failures.get(reason, 0) + 1
        self.close(stream)

    def close(self, stream):
        if not stream.closed:
            stream.closed = True
            self.selector.unregister(stream.sock)
            stream.sock.close()

    def close_all(self):
        for stream in self.streams:
            self.close(stream)
        self.selector.close()

    def send(self, stream):
        stream.response = Response()
        try:
            stream.sock.send(self.request)
        except OSError:
            self.fail(stream, "connection refused")
            return
        self.selector.modify(stream.sock, selectors.EVENT_READ, stream)

    def receive(self, stream, now):
        try:
            data = stream.sock.recv(262144)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.fail(stream, "closed mid-answer" if stream.response.status else "closed before answering")
            return
        response = stream.response
        before = response.deltas
        done = response.feed(data, now)
        self.deltas += response.deltas - before
        if not done:
            return
        reason = response.verdict()
        if reason:
            self.fail(stream, reason)
            return
        self.completed += 1
        if self.repeat:
            self.send(stream)
        else:
            self.close(stream)

    def pump(self, seconds, until=None):
        """Serves the connections for up to seconds, or until until() holds."""
        deadline = time.monotonic() + seconds
        while not (until and until()):
            left = deadline - time.monotonic()
            if left <= 0 or not self.selector.get_map():
                break
            for key, events in self.selector.select(min(left, 0.25)):
                if events & selectors.EVENT_WRITE:
                    self.send(key.data)
                else:
                    self.receive(key.data, time.monotonic())

    def count(self, test):
        return sum(1 for s in self.streams if test(s.response))
