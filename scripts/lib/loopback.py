"""What the loopback test scripts share: a free port, a FeedProxy started and stopped by
PID, and the ok/FAIL lines with their tally (browser-test, demo-test, loop-attacks,
refresh-bytes)."""
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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_feedproxy(binary, port, env, stdout=subprocess.DEVNULL, arguments=("--fixtures", "Fixtures")):
    """`binary` on 127.0.0.1:`port`, answering /healthz (or given up on after 5 s)."""
    proc = subprocess.Popen([binary, *arguments, "--port", str(port)], env=env, stdout=stdout, stderr=subprocess.STDOUT)
    for _ in range(100):
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
