#!/usr/bin/env python3
"""`permitcheck conform` stopped by SIGINT or SIGTERM stops its client (issue 18) and prints the
report of every scenario that finished, marked interrupted (issue 33).

    conform_signal.py PERMITCHECK WORKDIR INT|TERM [REFERENCE_CLIENT]

Starts conform on a client that never subscribes (a shell that starts `sleep 600`, writes its
pid, and waits), with SIGINT and SIGTERM at their defaults (a test runner may have started us
with SIGINT ignored, which conform respects). Once the client runs, sends the signal to conform
and expects: conform gone within 5 s, exit 128 + n, its report on stdout marked INTERRUPTED,
and the client's `sleep` gone too. With REFERENCE_CLIENT, the first scenario
(complete_batches) runs that client to its end first, and the report must show it PASS.
WORKDIR must be this test's own: the client's pid file in it tells when to send the signal.
Q and T are given (no flow probe), so every client start counted above is a scenario run.
Exit 0 pass, 1 fail, each with one line saying why.
"""
import json
import os
import shutil
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
    reference = sys.argv[4] if len(sys.argv) > 4 else None
    sig = {"INT": signal.SIGINT, "TERM": signal.SIGTERM}[name]
    os.makedirs(workdir, exist_ok=True)
    pidfile = os.path.join(workdir, f"client-{name}.pid")
    if os.path.exists(pidfile):
        os.remove(pidfile)

    def defaults():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    hang = f"sleep 600 & echo $! > {pidfile}; wait"
    scenarios = "complete_batches"
    if reference:
        # How many runs complete_batches takes with the reference client: those starts run it,
        # every later one (the next scenario's) hangs.
        probe = subprocess.run(
            [binary, "conform", "--client", f"{reference} --url {{url}} --q {{q}}",
             "--scenarios", "complete_batches", "--cases", "0", "--jobs", "1",
             "--q", "10", "--threshold", "5", "--format", "json"], capture_output=True, text=True, timeout=120)
        try:
            runs = json.loads(probe.stdout)["scenarios"][0]["runs"]
        except (ValueError, KeyError, IndexError):
            print(f"FAIL the reference client's run gave no report: {probe.stderr[-500:]}")
            return 1
        starts = os.path.join(workdir, f"starts-{name}")
        shutil.rmtree(starts, ignore_errors=True)
        os.makedirs(starts)
        hang = (f"i=0; while ! mkdir {starts}/$i 2>/dev/null; do i=$((i+1)); done; "
                f"if [ $i -lt {runs} ]; then exec {reference} --url {{url}} --q {{q}}; fi; "
                f"{hang}")
        scenarios = "complete_batches,close_consumer"
    conform = subprocess.Popen(
        [binary, "conform", "--client", f"{hang} # {{url}}",
         "--startup", "60", "--timeout", "70", "--scenarios", scenarios,
         "--cases", "0", "--jobs", "1", "--q", "10", "--threshold", "5"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=defaults, text=True)
    until = time.monotonic() + (60 if reference else 20)
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
        out, _ = conform.communicate(timeout=5)
        rc = conform.returncode
    except subprocess.TimeoutExpired:
        conform.kill()
        os.kill(client, signal.SIGKILL)
        print(f"FAIL conform still running 5 s after SIG{name}")
        return 1
    took = time.monotonic() - sent
    if rc != 128 + sig:
        print(f"FAIL conform ended with {rc} after SIG{name}, expected {128 + sig}")
        return 1
    if "INTERRUPTED by a signal" not in out or "verdict: INTERRUPTED" not in out:
        print(f"FAIL no interrupted report on stdout after SIG{name}: {out[-500:]!r}")
        return 1
    if reference and "PASS complete_batches" not in out:
        print(f"FAIL the finished scenario is not in the interrupted report: {out[-800:]!r}")
        return 1
    if reference and "close_consumer" in out.split("Scenarios:")[1].split("Legacy rows")[0]:
        print(f"FAIL the unfinished scenario is reported as if finished: {out[-800:]!r}")
        return 1
    until = time.monotonic() + 3
    while not gone(client) and time.monotonic() < until:
        time.sleep(0.05)
    if not gone(client):
        os.kill(client, signal.SIGKILL)
        print(f"FAIL conform ended by SIG{name} but its client {client} was left running")
        return 1
    print(f"PASS conform ended by SIG{name} in {took:.2f} s (status {rc}), its client gone, "
          f"its report printed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
