#!/usr/bin/env python3
"""make soak: one daemon, DURATION seconds (default 600) of mixed concurrent calls.

Four callers at once send one daemon, through the real module binary (as
Ansible runs it: argv[1] is the arguments file), a mix of requests for
DURATION seconds:

- plans of the example bundle, some with the page (html_to);
- catalogs (zarf_bundle_catalog) of the catalog bundle, with its chart;
- saved-plan checks (plan_file) of a plan saved at the start;
- failures of every kind it can make offline: a cycle, a missing
  requirement, an ambiguous group, a malformed document, a version
  conflict (newest_only), a policy refusal, a signature by another key, a
  tampered saved plan, a directory that is not there;
- the page of an empty directory (an empty plan);
- cancelled calls: a plan whose module is sent SIGTERM shortly after it
  starts, and a plan whose module is killed outright.

It uses its own state and cache directories (.cache/bench/soak), never the
user's; the archive cache is warm after the first round (each archive is
read once, then answered by stat), the plan memo and kept plans follow the
same requests, and every request still reaches the daemon except a
repeated plan that a kept plan answers. It samples the daemon every 5 s
(the state file's pid, /proc's VmRSS and descriptors, and the daemon's own
goroutine count from `zarf-planner daemon status`) and reports:

- daemon restarts (goal 0): how many daemon pids answered, less one;
- peak RSS;
- goroutines and open descriptors at the start (after the warm-up round)
  and at the end (once the last call returned and the daemon is idle);
  goal: back to the start;
- p50 and p99 latency of each kind of call and of all of them.

Not part of make test. `python3 testdata/bench/soak/soak.py [SECONDS]`.
"""
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.path.join(ROOT, "bin")
MODULE = os.path.join(BIN, "zarf_planner_module")
DAEMON = os.path.join(BIN, "zarf-planner")
WORK = os.path.join(ROOT, ".cache", "bench", "soak")
STATE = os.path.join(WORK, "state")
CACHE = os.path.join(WORK, "cache")
BUNDLES = os.path.join(ROOT, "testdata", "bundles")
EXAMPLE = os.path.join(ROOT, "examples", "bundles", "reference-stack")


def module(name, args, timeout=120, cancel=None):
    """Runs the module once; returns (exit code, result, seconds)."""
    base = {"state_dir": STATE, "cache_dir": CACHE, "daemon_path": DAEMON, "_ansible_module_name": name}
    base.update(args)
    fd, path = tempfile.mkstemp(dir=WORK, suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(base, f)
    start = time.monotonic()
    p = subprocess.Popen([MODULE, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, ZARF_PLANNER_MODULE=name))
    if cancel:
        time.sleep(cancel[1])
        p.send_signal(cancel[0])
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    took = time.monotonic() - start
    os.unlink(path)
    try:
        res = json.loads(out) if out.strip() else {}
    except ValueError:
        res = {"msg": "not JSON: " + out[:200].decode(errors="replace")}
    return p.returncode, res, took


def status():
    """The daemon's pid, RSS (KiB), open descriptors and goroutines."""
    out = subprocess.run([DAEMON, "daemon", "status", "--state-dir", STATE], capture_output=True, text=True).stdout
    m = re.search(r"pid (\d+),.*?(\d+) goroutines", out)
    if not m:
        return None
    pid, goroutines = int(m.group(1)), int(m.group(2))
    try:
        with open("/proc/%d/status" % pid) as f:
            rss = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
        fds = len(os.listdir("/proc/%d/fd" % pid))
    except (OSError, AttributeError):
        return None
    return {"pid": pid, "rss": rss, "fds": fds, "goroutines": goroutines}


def setup():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK, mode=0o700)
    os.makedirs(STATE, mode=0o700)
    empty = os.path.join(WORK, "empty")
    os.makedirs(empty)
    policy = os.path.join(WORK, "policy.yaml")
    with open(policy, "w") as f:
        f.write("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed:\n  namespaces: []\n")
    saved = os.path.join(WORK, "saved.json")
    code, res, _ = module("zarf_bundle_plan", {"path": EXAMPLE, "save_to": saved})
    if code != 0:
        sys.exit("saving the plan failed: %s" % res.get("msg"))
    tampered = os.path.join(WORK, "tampered.json")
    with open(saved) as f:
        doc = f.read()
    with open(tampered, "w") as f:
        f.write(doc.replace('"result": {', '"result": {"ansible_facts": {}, ', 1))
    key, other = os.path.join(ROOT, "testdata", "keys", "cosign.pub"), os.path.join(ROOT, "testdata", "keys", "other.pub")
    page = lambda: os.path.join(WORK, "page-%d.html" % threading.get_ident())
    plan = lambda **kw: ("zarf_bundle_plan", kw)
    mix = {
        "plan": lambda: plan(path=EXAMPLE),
        "plan, page": lambda: plan(path=EXAMPLE, html_to=page()),
        "catalog": lambda: ("zarf_bundle_catalog", {"path": os.path.join(BUNDLES, "catalog")}),
        "saved plan": lambda: plan(path=EXAMPLE, plan_file=saved),
        "fail: cycle": lambda: plan(path=os.path.join(BUNDLES, "cycle")),
        "fail: missing": lambda: plan(path=os.path.join(BUNDLES, "missing")),
        "fail: ambiguous": lambda: plan(path=os.path.join(BUNDLES, "ambiguous")),
        "fail: invalid": lambda: plan(path=os.path.join(BUNDLES, "malformed")),
        "fail: version_conflict": lambda: plan(path=os.path.join(BUNDLES, "versions"), version_strategy="newest_only"),
        "fail: policy, page": lambda: plan(path=os.path.join(BUNDLES, "catalog"), policy=policy, html_to=page()),
        "fail: signature": lambda: plan(path=os.path.join(BUNDLES, "signed"), public_key=other),
        "fail: stale": lambda: plan(path=EXAMPLE, plan_file=tampered),
        "empty, page": lambda: plan(path=empty, html_to=page()),  # an empty plan: no failure
        "fail: no directory": lambda: plan(path=os.path.join(WORK, "absent")),
        "signed": lambda: plan(path=os.path.join(BUNDLES, "signed"), public_key=key),
    }
    return mix


def main():
    duration = float(sys.argv[1]) if len(sys.argv) > 1 else float(os.environ.get("DURATION", "600"))
    mix = setup()
    kinds = sorted(mix) + ["cancelled: SIGTERM", "cancelled: SIGKILL"]
    # Warm-up: every kind once, then the start sample.
    for k in sorted(mix):
        name, args = mix[k]()
        module(name, args)
    time.sleep(1)
    start = status()
    if start is None:
        sys.exit("no daemon answers after the warm-up")
    latencies = {k: [] for k in kinds}
    unexpected, pids, samples, lock = [], {start["pid"]}, [start], threading.Lock()
    stop_at = time.monotonic() + duration

    def caller(seed):
        rng = random.Random(seed)
        while time.monotonic() < stop_at:
            k = rng.choice(kinds)
            cancel = None
            if k.startswith("cancelled"):
                name, args = mix["plan"]()
                args = dict(args, use_cache=False)  # a read long enough to be cut
                cancel = (signal.SIGTERM if "TERM" in k else signal.SIGKILL, rng.uniform(0.02, 0.2))
            else:
                name, args = mix[k]()
            code, res, took = module(name, args, cancel=cancel)
            with lock:
                latencies[k].append(took)
                bad = (k.startswith("fail") and code != 1) or (not k.startswith(("fail", "cancelled")) and code != 0)
                msg = res.get("msg", "") if isinstance(res, dict) else ""
                if bad or "stopped answering" in msg or "internal error" in msg:
                    unexpected.append("%s: exit %s: %s" % (k, code, msg[:300]))

    def sampler():
        while time.monotonic() < stop_at:
            time.sleep(5)
            s = status()
            if s:
                with lock:
                    samples.append(s)
                    pids.add(s["pid"])

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(4)] + [threading.Thread(target=sampler)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(3)  # the last calls' goroutines end
    end = status() or {}
    if end:
        pids.add(end["pid"])

    def pct(xs, p):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))] if xs else float("nan")

    every = [x for k in kinds for x in latencies[k]]
    print("## Soak: %d s, 4 callers, one daemon (`python3 testdata/bench/soak/soak.py %d`)\n" % (duration, duration))
    print("| measure | start | end | peak |")
    print("|---|---|---|---|")
    print("| daemon restarts (goal 0) | | %d | |" % (len(pids) - 1))
    print("| RSS (MiB) | %.1f | %.1f | %.1f |" % (start["rss"] / 1024, end.get("rss", 0) / 1024, max(s["rss"] for s in samples + ([end] if end else [])) / 1024))
    print("| goroutines | %d | %s | %d |" % (start["goroutines"], end.get("goroutines", "-"), max(s["goroutines"] for s in samples)))
    print("| open descriptors | %d | %s | %d |" % (start["fds"], end.get("fds", "-"), max(s["fds"] for s in samples)))
    print("\n| call | n | p50 (ms) | p99 (ms) |")
    print("|---|---|---|---|")
    for k in kinds:
        xs = latencies[k]
        if xs:
            print("| %s | %d | %.0f | %.0f |" % (k, len(xs), pct(xs, 50) * 1000, pct(xs, 99) * 1000))
    print("| all | %d | %.0f | %.0f |" % (len(every), pct(every, 50) * 1000, pct(every, 99) * 1000))
    if unexpected:
        print("\n%d unexpected answers (the first 10):" % len(unexpected))
        for u in unexpected[:10]:
            print("- " + u)
    subprocess.run([DAEMON, "daemon", "stop", "--state-dir", STATE], capture_output=True)
    return 1 if unexpected or len(pids) > 1 else 0


if __name__ == "__main__":
    sys.exit(main())
