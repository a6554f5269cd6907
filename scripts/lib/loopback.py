"""What the loopback test scripts share: a free port, a FeedProxy started and stopped by
PID, and the ok/FAIL lines with their tally (browser-test, demo-test, loop-attacks,
refresh-bytes)."""
import random
import socket
import subprocess
import time
import urllib.request

failures = []


def check(label, value, ok, expected, word="expected"):
    """One line, `ok` or `FAIL`, with the figure and what it should be; failures are tallied."""
    print(f"  {'ok  ' if ok else 'FAIL'} {label}: {value}   ({word} {expected})", flush=True)
    if not ok:
        failures.append(label)


def free_port():
    """A port a server can listen on (on every address): below the kernel's ephemeral range. A
    port the kernel hands out at random may still be held by one of the client sockets a test
    just before closed (the Swift suite's, a bench round's 10,000), and the server then cannot
    bind it."""
    low = 32768
    try:
        low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    for _ in range(200):
        port = random.randrange(max(1024, low - 12000), low)
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port below the ephemeral range")


def start_feedproxy(binary, port, env, stdout=subprocess.DEVNULL, arguments=("--fixtures", "Fixtures")):
    """`binary` on 127.0.0.1:`port`, answering /healthz: waited for while it runs (a debug build on
    a busy machine took more than the 5 s this once allowed), up to a minute."""
    proc = subprocess.Popen([binary, *arguments, "--port", str(port)], env=env, stdout=stdout, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            break
        except OSError:
            time.sleep(0.05)
    return proc


def stop(proc):
    """SIGTERM, then SIGKILL after 10 s: only the process this script started."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
