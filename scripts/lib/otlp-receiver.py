"""A real OTLP/HTTP trace receiver on loopback, for FeedProxy's end-to-end tests.

Requests are decoded with the official OpenTelemetry protobuf definitions
(`pip install opentelemetry-proto`), so what FeedProxy exports is checked against the
wire format a collector would see, not against our own encoder.

    python3 scripts/lib/otlp-receiver.py --port 0 [--host 127.0.0.1]

prints one line `listening <port>` once bound, then serves until SIGTERM/SIGINT (exit 0).
A test starts it, points FeedProxy's OTLP endpoint at http://127.0.0.1:<port>, drives
traffic, then reads what arrived:

    POST /v1/traces       ExportTraceServiceRequest (protobuf, optionally gzip) -> 200 + empty response, 400 if unparsable
    GET  /spans           {"spans", "requests", "accepted", "headers", "bytes"} as JSON
    GET  /healthz         "ok"
    POST /control/fail?status=503&retry_after=2&count=3   next `count` exports get `status` (spans dropped)
    POST /control/delay?seconds=5                          every export waits that long first (0 = off)
    POST /control/reset                                    forget spans, counters and faults
"""
import argparse
import collections
import gzip
import json
import signal
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

MAX_SPANS = 100000
MAX_REQUESTS = 100000  # the per-request records are bounded too, for long soak runs


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.spans = collections.deque(maxlen=MAX_SPANS)  # maxlen drops the oldest
        self.headers = collections.deque(maxlen=MAX_REQUESTS)
        self.sizes = collections.deque(maxlen=MAX_REQUESTS)
        self.requests = 0
        self.accepted = 0
        self.fail_status = 0
        self.fail_retry_after = None
        self.fail_count = 0
        self.delay = 0.0


state = State()


def value(v):
    """An OTLP AnyValue as the plain Python value a test compares against."""
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return attributes(v.kvlist_value.values)
    if kind == "bytes_value":
        return v.bytes_value.hex()  # JSON has no bytes
    return getattr(v, kind) if kind else None


def attributes(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def span_dict(span, resource, scope):
    return {
        "traceId": span.trace_id.hex(),
        "spanId": span.span_id.hex(),
        "parentSpanId": span.parent_span_id.hex(),
        "traceState": span.trace_state,
        "name": span.name,
        "kind": span.kind,
        "startTimeUnixNano": span.start_time_unix_nano,
        "endTimeUnixNano": span.end_time_unix_nano,
        "attributes": attributes(span.attributes),
        "events": [{"name": e.name, "timeUnixNano": e.time_unix_nano, "attributes": attributes(e.attributes)}
                   for e in span.events],
        "status": {"code": span.status.code, "message": span.status.message},
        "links": [{"traceId": l.trace_id.hex(), "spanId": l.span_id.hex(), "attributes": attributes(l.attributes)}
                  for l in span.links],
        "flags": getattr(span, "flags", 0),  # older opentelemetry-proto releases lack Span.flags
        "resource": resource,
        "scope": scope,
    }


def decode(body):
    """Spans of an ExportTraceServiceRequest; DecodeError when the body is not one."""
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for rs in request.resource_spans:
        resource = attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            scope = {"name": ss.scope.name, "version": ss.scope.version}
            spans.extend(span_dict(s, resource, scope) for s in ss.spans)
    return spans


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as exporters expect; every reply sets Content-Length

    def log_message(self, *args):  # quiet: the test prints what matters
        pass

    def reply(self, status, body=b"", content_type="text/plain", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, val in extra:
            self.send_header(name, val)
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        # Read the whole body even when it will be refused, so the connection stays usable.
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self):
        path = urlsplit(self.path).path
        if path == "/healthz":
            self.reply(200, b"ok")
        elif path == "/spans":
            with state.lock:
                doc = {"spans": list(state.spans), "requests": state.requests, "accepted": state.accepted,
                       "headers": list(state.headers), "bytes": [list(s) for s in state.sizes]}
            self.reply(200, json.dumps(doc).encode(), "application/json")
        else:
            self.reply(404, b"not found")

    def do_POST(self):
        url = urlsplit(self.path)
        body = self.read_body()
        if url.path == "/v1/traces":
            self.export(body)
        elif url.path.startswith("/control/"):
            self.control(url.path[len("/control/"):], parse_qs(url.query))
        else:
            self.reply(404, b"not found")

    def export(self, compressed):
        headers = {k.lower(): v for k, v in self.headers.items()
                   if k.lower() in ("content-type", "content-encoding", "user-agent") or k.lower().startswith("x-")}
        encoding = self.headers.get("Content-Encoding", "").strip().lower()
        try:
            body = gzip.decompress(compressed) if encoding == "gzip" else compressed
        except (OSError, EOFError, zlib.error):
            body = None
        with state.lock:
            # Every attempt counts, refused or not: retry tests assert on the number of tries.
            state.requests += 1
            state.headers.append(headers)
            state.sizes.append((len(compressed), len(body) if body is not None else -1))
            delay = state.delay
            fail = None
            if state.fail_count > 0:
                state.fail_count -= 1
                fail = (state.fail_status, state.fail_retry_after)
        if delay:
            time.sleep(delay)  # outside the lock, so /spans and /control still answer meanwhile
        if fail:
            status, retry_after = fail
            self.reply(status, extra=[("Retry-After", retry_after)] if retry_after is not None else ())
            return
        if body is None:
            self.reply(400, b"bad gzip body")
            return
        try:
            spans = decode(body)
        except DecodeError as e:
            self.reply(400, f"not an ExportTraceServiceRequest: {e}".encode())
            return
        with state.lock:
            state.accepted += 1
            state.spans.extend(spans)
        self.reply(200, trace_service_pb2.ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf")

    def control(self, action, query):
        arg = lambda name, default: query.get(name, [default])[0]
        try:
            if action == "fail":
                status, count = int(arg("status", "503")), int(arg("count", "1"))
                retry_after = arg("retry_after", None)
                if not 100 <= status <= 599 or count < 0:
                    raise ValueError("status must be 100-599 and count >= 0")
                with state.lock:
                    state.fail_status, state.fail_retry_after, state.fail_count = status, retry_after, count
            elif action == "delay":
                seconds = float(arg("seconds", "0"))
                if seconds < 0:
                    raise ValueError("seconds must be >= 0")
                with state.lock:
                    state.delay = seconds
            elif action == "reset":
                with state.lock:
                    state.reset()
            else:
                self.reply(404, b"unknown control")
                return
        except ValueError as e:
            self.reply(400, str(e).encode())
            return
        self.reply(200, b"ok")


class Server(ThreadingHTTPServer):
    daemon_threads = True  # a delayed request must not hold up shutdown

    def handle_error(self, request, client_address):
        pass  # clients that hang up mid-reply are normal in these tests; stay quiet


def main():
    parser = argparse.ArgumentParser(description="OTLP/HTTP trace receiver for end-to-end tests")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args()

    # Block the stop signals before any thread starts so that only sigwait below sees them.
    signals = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    server = Server((args.host, args.port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening {server.server_address[1]}", flush=True)
    signal.sigwait(signals)
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
