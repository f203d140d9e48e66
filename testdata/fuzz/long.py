#!/usr/bin/env python3
"""make fuzz-long: every fuzz target of `make fuzz` for a set time each.

`make fuzz` runs each target for a fixed number of inputs (a few seconds),
too short to find what issue 29 found after 40 s. This runs each target
for FUZZTIME (default 60s; `make fuzz-long FUZZTIME=10m`), reads the fuzz
coordinator's progress lines ("fuzz: elapsed: 12s, execs: 3330 (171/sec)")
and reports per target:

- crashes: the run failed (the failing input is kept by go test under the
  package's testdata/fuzz/<Target>/, to commit as a regression seed);
- stalls: progress lines at 0 execs/sec after the baseline, that is inputs
  that cost far more than their size, and the longest run of them;
- the median exec rate.

It is not part of `make test`. It exits 1 when any target crashed.
"""
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINE = re.compile(r"fuzz: elapsed: (\d+)s, execs: (\d+) \((\d+)/sec\)")


def targets():
    """The FUZZ_TARGETS of the Makefile: one list, read from there."""
    out = subprocess.run(["make", "-s", "-C", ROOT, "print-fuzz-targets"], capture_output=True, text=True, check=True).stdout
    for t in out.split():
        pkg, name, _ = t.split(":")
        yield pkg, name


def run(pkg, name, fuzztime):
    cmd = ["go", "test", pkg, "-run", "XXX", "-fuzz", "^%s$" % name, "-fuzztime", fuzztime, "-fuzzminimizetime", "10s"]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    progress, tail = [], []
    for line in p.stdout:
        tail = (tail + [line.rstrip()])[-30:]
        m = LINE.search(line)
        if m:
            progress.append((int(m.group(2)), int(m.group(3))))
    code = p.wait()
    # The coordinator's last line, printed as it stops, always says 0/sec:
    # it is no stall.
    progress = progress[:-1]
    rates = [r for _, r in progress]
    stalls = longest = current = 0
    for execs, rate in progress:
        if rate == 0 and execs > 0:
            stalls += 1
            current += 1
            longest = max(longest, current)
        else:
            current = 0
    return code, rates, stalls, longest, tail


def main():
    fuzztime = os.environ.get("FUZZTIME") or "60s"
    rows, crashed = [], False
    for pkg, name in targets():
        print("== %s %s (%s)" % (pkg, name, fuzztime), flush=True)
        code, rates, stalls, longest, tail = run(pkg, name, fuzztime)
        if code != 0:
            crashed = True
            print("\n".join(tail))
        median = statistics.median(rates) if rates else 0
        rows.append((pkg, name, "crashed" if code else "ok", median, stalls, longest * 3))
    print("\n| package | target | result | median execs/s | stalled progress lines | longest stall (s) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %d | %d | ~%d |" % r)
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
