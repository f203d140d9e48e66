#!/usr/bin/env python3
"""make bench-cache: planning with a warm cache against a bare stat walk.

Builds once (cached under .cache/bench/cache/archives) 1,000 distinct small
Zarf packages with the zarf CLI (each its own name and prerequisites, not
copies). Then, in one run, it measures:

- a bare stat walk of the directory: find DIR -name '*.tar*' -printf '%s %T@\\n';
- a cold plan (empty cache) and a warm plan, through the CLI with its own
  cache, and through the daemon (the CLI talking to a running daemon, and
  the Ansible module);
- a warm inspect (the directory scan alone) through the daemon;

and prints the ratios to the stat walk as a markdown table (each measurement
alternates with the stat walk, so a drift in the machine touches both).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import json

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BASE = os.path.join(ROOT, ".cache", "bench", "cache")
ARCHIVES = os.path.join(BASE, "archives")
ZARF = os.path.join(ROOT, ".tools", "bin", "zarf")
PLANNER = os.path.join(ROOT, "bin", "zarf-planner")
MODULE = os.path.join(ROOT, "bin", "zarf_planner_module")
N = 1000


def build():
    stamp = os.path.join(BASE, f"built-{N}")
    if os.path.exists(stamp):
        return
    shutil.rmtree(ARCHIVES, ignore_errors=True)
    os.makedirs(ARCHIVES)
    src = os.path.join(BASE, "src")
    for i in range(N):
        name = f"pkg-{i:04d}"
        d = os.path.join(src, name)
        os.makedirs(os.path.join(d, "docs"), exist_ok=True)
        with open(os.path.join(d, "cm.yaml"), "w") as f:
            f.write(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n  index: \"{i}\"\n")
        with open(os.path.join(d, "zarf.yaml"), "w") as f:
            f.write(f"kind: ZarfPackageConfig\nmetadata:\n  name: {name}\n  version: 1.{i % 10}.{i}\n"
                    "documentation:\n  prerequisites: docs/prerequisites.yaml\ncomponents:\n  - name: cm\n    required: true\n"
                    "    manifests:\n      - name: cm\n        namespace: default\n        files:\n          - cm.yaml\n")
        reqs = ""
        if i:
            reqs = f"requires:\n  packages:\n    - name: pkg-{(i * 7919) % i:04d}\n"
            if i % 3 == 0:
                reqs += f"  crds: [crd{(i * 31) % i}.example.com]\n"
        with open(os.path.join(d, "docs", "prerequisites.yaml"), "w") as f:
            f.write(f"apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata:\n  package: {name}\n  version: 1.{i % 10}.{i}\n"
                    f"provides:\n  crds: [crd{i}.example.com]\n{reqs}")
        subprocess.run([ZARF, "package", "create", d, "--confirm", "--architecture", "amd64", "--skip-sbom",
                        "--output", ARCHIVES, "--log-level", "warn", "--no-color"], check=True, stdout=subprocess.DEVNULL)
        shutil.rmtree(d)
        if i % 100 == 99:
            print(f"built {i + 1} archives", file=sys.stderr)
    open(stamp, "w").close()


WALK = ["find", ARCHIVES, "-name", "*.tar*", "-printf", "%s %T@\\n"]
RUNS = 20


def once(cmd, env=None):
    start = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {p.stderr.decode()}")
    return took


def paired(cmd, env=None, runs=RUNS):
    """Runs cmd and the stat walk alternately, runs times each, so that a
    drift in the machine's speed touches both alike. cmd may be a function
    of the run's index. Returns the best time, the median time and the
    median of the per-pair ratios."""
    times, ratios = [], []
    for i in range(runs):
        c = cmd(i) if callable(cmd) else cmd
        walk = once(WALK)
        took = once(c, env)
        times.append(took)
        ratios.append(took / walk)
    return min(times), statistics.median(times), statistics.median(ratios)


def module_args(work, name, **extra):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(dict({"path": ARCHIVES, "daemon_path": PLANNER, "state_dir": os.path.join(work, "state"),
                        "_ansible_module_name": "zarf_bundle_plan"}, **extra), f)
    return [MODULE, path]


def main():
    build()
    if len(sys.argv) > 1 and sys.argv[1] == "build-only":
        return
    work = tempfile.mkdtemp(prefix="zp-bench-cache-")
    try:
        env = dict(os.environ, ZARF_PLANNER_STATE_DIR=os.path.join(work, "state"), ZARF_PLANNER_CACHE_DIR=os.path.join(work, "cache"))
        # Warm the page cache so every measurement reads memory.
        subprocess.run(["cat"] + [os.path.join(ARCHIVES, f) for f in os.listdir(ARCHIVES)], stdout=subprocess.DEVNULL, check=True)
        walks = sorted(once(WALK) for _ in range(RUNS))
        walk = (walks[0], statistics.median(walks), 1.0)
        plan = [PLANNER, "plan", ARCHIVES, "-o", "json"]
        # CLI with its own cache (no daemon running).
        cold_cli = paired(plan, env=env, runs=1)
        warm_cli = paired(plan, env=env)
        nocache = paired(plan + ["--use-cache=false"], env=env, runs=3)
        # Through a running daemon, with a fresh cache of its own.
        denv = dict(env, ZARF_PLANNER_CACHE_DIR=os.path.join(work, "dcache"))
        daemon = subprocess.Popen([PLANNER, "serve"], env=denv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(200):
            if os.path.exists(os.path.join(work, "state", "daemon.json")):
                break
            time.sleep(0.02)
        cold_daemon = paired(plan, env=denv, runs=1)
        warm_daemon = paired(plan, env=denv)
        warm_inspect = paired([PLANNER, "inspect", ARCHIVES, "-o", "json"], env=denv)
        warm_module = paired(module_args(work, "args.json"), env=denv)
        # A question the daemon has not answered yet (its plan memo misses):
        # a priority for a package in no group changes nothing in the plan
        # but is part of the request.
        new_question = paired(lambda i: module_args(work, f"args-{i}.json", priorities={"pkg-0000": i}), env=denv)
        stats = subprocess.run([PLANNER, "daemon", "status"], env=denv, capture_output=True, text=True).stdout.strip()
        subprocess.run([PLANNER, "daemon", "stop"], env=denv, stdout=subprocess.DEVNULL)
        daemon.wait(timeout=30)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    n = len([f for f in os.listdir(ARCHIVES) if ".tar" in f])
    print(f"{n} distinct archives made by the zarf CLI. Each measurement ran {RUNS} times (cold: once, no cache: 3),")
    print("alternating with the stat walk; the ratio is the median of the per-pair ratios.\n")
    print("| measurement | best | median | ratio to the stat walk |")
    print("|---|---|---|---|")
    rows = [
        ("bare stat walk: `find DIR -name '*.tar*' -printf '%s %T@\\n'`", walk),
        ("CLI `plan`, no cache (`--use-cache=false`)", nocache),
        ("CLI `plan`, cold cache (its own)", cold_cli),
        ("CLI `plan`, warm cache (its own)", warm_cli),
        ("CLI `plan` through the daemon, cold cache", cold_daemon),
        ("CLI `plan` through the daemon, warm cache", warm_daemon),
        ("module `zarf_bundle_plan` through the daemon, warm cache", warm_module),
        ("module, warm cache, a question not asked before (plan memo misses)", new_question),
        ("CLI `inspect` through the daemon, warm cache (the scan alone)", warm_inspect),
    ]
    for label, (best, median, ratio) in rows:
        print(f"| {label} | {best * 1000:.1f} ms | {median * 1000:.1f} ms | {ratio:.1f}× |")
    print(f"\nDaemon after the run: {stats}")


if __name__ == "__main__":
    main()
