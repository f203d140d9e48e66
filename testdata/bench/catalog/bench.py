#!/usr/bin/env python3
"""make bench-catalog: what the catalog costs beside a plan and a stat walk.

Uses the directories the other benchmarks build with the zarf CLI (run
`make bench-inspect` and `make bench-cache` once, or their scripts with
build-only): the "large" directory of .cache/bench/inspect (20 packages,
three of ~260 MB) and the 1,000 distinct small archives of
.cache/bench/cache. With the page cache warm, in one run, it measures:

- a cold catalog against a cold plan of the large directory, each with a
  fresh cache and no daemon, alternately (the claims must not cost a
  second read of any archive): the median of the per-pair ratios;
- a warm catalog of the 1,000 archives against a bare stat walk, through
  the CLI with its own cache, the CLI through a running daemon and the
  zarf_bundle_catalog module through it, alternately;

and prints the results as a markdown table. Given --reference BIN (a
zarf-planner built without the catalog), it also times that binary's cold
plan of the large directory, to show what collecting the claims costs a
plan.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
LARGE = os.path.join(ROOT, ".cache", "bench", "inspect", "large")
MANY = os.path.join(ROOT, ".cache", "bench", "cache", "archives")
PLANNER = os.path.join(ROOT, "bin", "zarf-planner")
MODULE = os.path.join(ROOT, "bin", "zarf_planner_module")
WALK = ["find", MANY, "-name", "*.tar*", "-printf", "%s %T@\\n"]


def once(cmd, env=None):
    start = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if p.returncode not in (0, 1):  # 1: a plan that is not possible is still an answer
        raise SystemExit(f"{cmd} failed: {p.stderr.decode()}")
    return took


def paired(a, b, runs):
    """Runs a and b alternately, runs times each (each a function of the
    run's index returning a command and its env). Returns a's and b's
    median times and the median of the per-pair ratios a/b."""
    ta, tb, ratios = [], [], []
    for i in range(runs):
        cb, eb = b(i)
        ca, ea = a(i)
        y = once(cb, eb)
        x = once(ca, ea)
        ta.append(x)
        tb.append(y)
        ratios.append(x / y)
    return statistics.median(ta), statistics.median(tb), statistics.median(ratios)


def warm_page_cache(d):
    subprocess.run(["cat"] + [os.path.join(d, f) for f in sorted(os.listdir(d))], stdout=subprocess.DEVNULL, check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5, help="pairs of cold runs")
    ap.add_argument("--warm-runs", type=int, default=20, help="pairs of warm runs")
    ap.add_argument("--reference", help="a zarf-planner without the catalog, to time its cold plan too")
    args = ap.parse_args()
    for d, make in ((LARGE, "bench-inspect"), (MANY, "bench-cache")):
        if not os.path.isdir(d):
            raise SystemExit(f"{d} is missing: run `make {make}` once (it builds it with the zarf CLI)")
    work = tempfile.mkdtemp(prefix="zp-bench-catalog-")
    try:
        state = os.path.join(work, "state")
        base = dict(os.environ, ZARF_PLANNER_STATE_DIR=state)

        def fresh(tag, i):
            return dict(base, ZARF_PLANNER_CACHE_DIR=os.path.join(work, f"{tag}-{i}"))

        warm_page_cache(LARGE)
        catalog = [PLANNER, "catalog", LARGE, "-o", "json"]
        plan = [PLANNER, "plan", LARGE, "-o", "json"]
        cold_cat, cold_plan, cold_ratio = paired(lambda i: (catalog, fresh("cat", i)), lambda i: (plan, fresh("plan", i)), args.runs)
        ref = None
        if args.reference:
            ref = paired(lambda i: (plan, fresh("plan2", i)), lambda i: ([args.reference, "plan", LARGE, "-o", "json"], fresh("ref", i)), args.runs)

        warm_page_cache(MANY)
        many = [PLANNER, "catalog", MANY, "-o", "json"]
        cli_env = dict(base, ZARF_PLANNER_CACHE_DIR=os.path.join(work, "many-cli"))
        once(many, cli_env)  # fill the cache
        warm_cli = paired(lambda i: (many, cli_env), lambda i: (WALK, None), args.warm_runs)
        denv = dict(base, ZARF_PLANNER_CACHE_DIR=os.path.join(work, "many-daemon"))
        daemon = subprocess.Popen([PLANNER, "serve"], env=denv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            for _ in range(500):
                if os.path.exists(os.path.join(state, "daemon.json")):
                    break
                time.sleep(0.02)
            once(many, denv)  # fill the daemon's cache
            warm_daemon = paired(lambda i: (many, denv), lambda i: (WALK, None), args.warm_runs)
            margs = os.path.join(work, "args.json")
            with open(margs, "w") as f:
                json.dump({"path": MANY, "daemon_path": PLANNER, "state_dir": state, "_ansible_module_name": "zarf_bundle_catalog"}, f)
            warm_module = paired(lambda i: ([MODULE, margs], denv), lambda i: (WALK, None), args.warm_runs)
            # The same path for a plan, as a yardstick measured alongside.
            pargs = os.path.join(work, "plan-args.json")
            with open(pargs, "w") as f:
                json.dump({"path": MANY, "daemon_path": PLANNER, "state_dir": state, "_ansible_module_name": "zarf_bundle_plan"}, f)
            once([MODULE, pargs], denv)
            plan_module = paired(lambda i: ([MODULE, pargs], denv), lambda i: (WALK, None), args.warm_runs)
            stats = subprocess.run([PLANNER, "daemon", "status"], env=denv, capture_output=True, text=True).stdout.strip()
        finally:
            subprocess.run([PLANNER, "daemon", "stop"], env=denv, stdout=subprocess.DEVNULL)
            daemon.wait(timeout=30)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    size = sum(os.path.getsize(os.path.join(LARGE, f)) for f in os.listdir(LARGE))
    n = len([f for f in os.listdir(MANY) if ".tar" in f])
    print(f"Large directory: {len(os.listdir(LARGE))} archives, {size / (1 << 20):.0f} MiB; many: {n} archives. "
          f"Cold: {args.runs} pairs, warm: {args.warm_runs} pairs, alternating; ratio = median of per-pair ratios.\n")
    print("| measurement | median | against | its median | ratio |")
    print("|---|---|---|---|---|")
    print(f"| cold `catalog` of the large directory (fresh cache, no daemon) | {cold_cat:.2f} s | cold `plan` of it | {cold_plan:.2f} s | {cold_ratio:.2f}× |")
    if ref:
        print(f"| cold `plan` of the large directory, this build | {ref[0]:.2f} s | the same, --reference build | {ref[1]:.2f} s | {ref[2]:.2f}× |")
    print(f"| warm `catalog` of {n} archives, CLI with its own cache | {warm_cli[0] * 1000:.0f} ms | bare stat walk | {warm_cli[1] * 1000:.1f} ms | {warm_cli[2]:.1f}× |")
    print(f"| warm `catalog` of {n} archives, CLI through the daemon | {warm_daemon[0] * 1000:.0f} ms | bare stat walk | {warm_daemon[1] * 1000:.1f} ms | {warm_daemon[2]:.1f}× |")
    print(f"| warm `zarf_bundle_catalog` module of {n} archives through the daemon | {warm_module[0] * 1000:.0f} ms | bare stat walk | {warm_module[1] * 1000:.1f} ms | {warm_module[2]:.1f}× |")
    print(f"| (yardstick) warm `zarf_bundle_plan` module of {n} archives through the daemon | {plan_module[0] * 1000:.0f} ms | bare stat walk | {plan_module[1] * 1000:.1f} ms | {plan_module[2]:.1f}× |")
    print(f"\nDaemon after the run: {stats}")


if __name__ == "__main__":
    main()
