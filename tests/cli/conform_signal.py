#!/usr/bin/env python3
"""`permitcheck conform` stopped by SIGINT or SIGTERM stops its client (issue 18).

    conform_signal.py PERMITCHECK WORKDIR INT|TERM

Starts conform on a client that never subscribes (a shell that starts `sleep 600`, writes its
pid, and waits), with SIGINT and SIGTERM at their defaults (a test runner may have started us
with SIGINT ignored, which conform respects). Once the client runs, sends the signal to conform
and expects: conform gone within 5 s, ended by that signal (or exit 128 + n), and the client's
`sleep` gone too. Exit 0 pass, 1 fail, each with one line saying why.
"""
import os
import signal
import subprocess
import sys
import time


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie is gone
    except OSError:
        return True


def main():
    binary, workdir, name = sys.argv[1], sys.argv[2], sys.argv[3]
    sig = {"INT": signal.SIGINT, "TERM": signal.SIGTERM}[name]
    os.makedirs(workdir, exist_ok=True)
    pidfile = os.path.join(workdir, f"client-{name}.pid")
    if os.path.exists(pidfile):
        os.remove(pidfile)

    def defaults():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    conform = subprocess.Popen(
        [binary, "conform", "--client", f"sleep 600 & echo $! > {pidfile}; wait # {{url}}",
         "--startup", "60", "--timeout", "70", "--scenarios", "complete_batches",
         "--cases", "0", "--jobs", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=defaults)
    until = time.monotonic() + 20
    client = None
    while time.monotonic() < until and client is None:
        try:
            with open(pidfile) as f:
                client = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            time.sleep(0.05)
    if client is None:
        conform.kill()
        print(f"FAIL the client never started within 20 s ({pidfile})")
        return 1
    sent = time.monotonic()
    conform.send_signal(sig)
    try:
        rc = conform.wait(timeout=5)
    except subprocess.TimeoutExpired:
        conform.kill()
        os.kill(client, signal.SIGKILL)
        print(f"FAIL conform still running 5 s after SIG{name}")
        return 1
    took = time.monotonic() - sent
    if rc not in (-sig, 128 + sig):
        print(f"FAIL conform ended with {rc} after SIG{name}, expected {-sig} or {128 + sig}")
        return 1
    until = time.monotonic() + 3
    while not gone(client) and time.monotonic() < until:
        time.sleep(0.05)
    if not gone(client):
        os.kill(client, signal.SIGKILL)
        print(f"FAIL conform ended by SIG{name} but its client {client} was left running")
        return 1
    print(f"PASS conform ended by SIG{name} in {took:.2f} s (status {rc}), its client gone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
