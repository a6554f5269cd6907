#!/usr/bin/env python3
"""Clients that try to hold or spin an event loop, against a release binary on loopback.

Usage: python3 scripts/bench/loop-attacks.py path/to/feedproxy   (run by `make bench`)

Starts `feedproxy --fixtures` with HEADER_TIMEOUT_S=3 (everything else default) and measures:
  1. CPU the server spends on one connection trickling a body a byte per segment (one a
     millisecond) after a 512 KiB start, for 5 s: chunked against the same body with Content-Length
     (target: chunked <= 3x sized, and < 0.5 s of CPU per 5 s);
  2. a body sent one byte every 2 s: cut off (408, closed) within 4 x HEADER_TIMEOUT_S of the head;
  3. a 64 KiB chunk extension: refused (400) within 1 s;
  4. an honest client's cache hits while eight connections trickle chunked bodies: p99 < 50 ms.
Each line says ok or FAIL with the figure and the target; exits 1 on any FAIL.
Everything it starts it stops, by PID.
"""
import os
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from loopback import check as report, failures, free_port, start_feedproxy, stop as stop_process  # noqa: E402  (the scripts' shared helpers)

HEADER_TIMEOUT_S = 3


def check(label, value, ok, target):
    report(label, value, ok, target, word="target")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_status(s, timeout):
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionError):
        return None
    try:
        return int(data.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def trickle(port, chunked, seconds, stop=None):
    """One connection: head, 512 KiB of body, then one byte per send (1 ms apart) for `seconds`."""
    s = connect(port)
    size = 0xFFFFF
    framing = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: %d" % size
    s.sendall(b"POST /photos HTTP/1.1\r\nHost: x\r\n" + framing + b"\r\n\r\n" + (b"FFFFF\r\n" if chunked else b""))
    s.sendall(b"a" * (512 << 10))
    end = time.monotonic() + seconds
    sent = 512 << 10
    try:
        while time.monotonic() < end and sent < size - 1 and not (stop and stop.is_set()):
            s.send(b"a")
            sent += 1
            time.sleep(0.001)  # a segment per millisecond, each its own read on the server
    except OSError:
        pass
    s.close()
    return sent


def main():
    binary = sys.argv[1]
    port = free_port()
    env = dict(os.environ, HEADER_TIMEOUT_S=str(HEADER_TIMEOUT_S), LOG_LEVEL="warn")
    proc = start_feedproxy(binary, port, env, arguments=("--fixtures", "Fixtures", "--threads", "2"))
    try:
        print(f"loop attacks: feedproxy pid {proc.pid} on :{port}, HEADER_TIMEOUT_S={HEADER_TIMEOUT_S}")

        # 1. CPU per trickled body.
        cpu = {}
        for chunked in (False, True):
            before = cpu_seconds(proc.pid)
            sent = trickle(port, chunked, 5.0)
            time.sleep(0.2)
            cpu[chunked] = cpu_seconds(proc.pid) - before
            print(f"  ..   {'chunked' if chunked else 'sized'}: {sent - (512 << 10)} single-byte segments after 512 KiB, "
                  f"server CPU {cpu[chunked]:.2f} s")
        ratio = cpu[True] / max(cpu[False], 0.01)
        check("server CPU, chunked trickle vs sized (5 s each)", f"{cpu[True]:.2f} s vs {cpu[False]:.2f} s ({ratio:.1f}x)",
              ratio <= 3 or cpu[True] <= 0.05, "<= 3x")
        check("server CPU of the chunked trickle", f"{cpu[True]:.2f} s per 5 s", cpu[True] < 0.5, "< 0.5 s")

        # 2. A body slower than its deadline.
        s = connect(port)
        s.sendall(b"POST /photos HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
        head_sent = time.monotonic()
        status = None
        while time.monotonic() - head_sent < 6 * HEADER_TIMEOUT_S:
            try:
                s.send(b"a")
            except OSError:
                break
            status = read_status(s, 2.0)
            if status is not None:
                break
        cut = time.monotonic() - head_sent
        s.close()
        check("a body sent a byte every 2 s: answered and closed after the head", f"{status} after {cut:.1f} s",
              status == 408 and cut <= 4 * HEADER_TIMEOUT_S, f"408 within {4 * HEADER_TIMEOUT_S} s")

        # 3. An oversized chunk extension.
        s = connect(port)
        s.sendall(b"POST /photos HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;")
        started = time.monotonic()
        try:
            s.sendall(b"x" * (64 << 10))
        except OSError:
            pass
        status = read_status(s, 5.0)
        took = time.monotonic() - started
        s.close()
        check("a 64 KiB chunk extension", f"{status} after {took * 1000:.0f} ms", status == 400 and took < 1, "400 within 1 s")

        # 4. An honest client beside eight tricklers.
        stop = threading.Event()
        attackers = [threading.Thread(target=trickle, args=(port, True, 8.0, stop)) for _ in range(8)]
        for t in attackers:
            t.start()
        time.sleep(0.5)
        honest = connect(port)
        latencies = []
        end = time.monotonic() + 5
        while time.monotonic() < end:
            t0 = time.monotonic()
            honest.sendall(b"GET /photos HTTP/1.1\r\nHost: x\r\n\r\n")
            data = b""
            while b"\r\n\r\n" not in data:
                data += honest.recv(65536)
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0].split(b":")[1])
            while len(rest) < length:
                rest += honest.recv(65536)
            latencies.append((time.monotonic() - t0) * 1000)
            time.sleep(0.01)
        honest.close()
        stop.set()
        for t in attackers:
            t.join()
        latencies.sort()
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        check(f"honest cache hits beside 8 chunked tricklers ({len(latencies)} requests)",
              f"p99 {p99:.1f} ms, median {statistics.median(latencies):.1f} ms", p99 < 50, "p99 < 50 ms")
    finally:
        stop_process(proc)
    print(f"loop attacks: {'all targets met' if not failures else str(len(failures)) + ' missed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
