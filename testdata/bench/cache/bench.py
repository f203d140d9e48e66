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
- the operator's path after warm-cache.yml: the cache is warm but no
  daemon runs (it idled out, or was stopped): the module's first plan
  without options right after zarf_bundle_cache warmed the directory
  (which keeps that plan), the first plan of a question asked before
  (both answered by the module alone from the plans the cache keeps), and
  of a question never asked (the module starts the daemon, which plans);

and prints the ratios to the stat walk as a markdown table (each measurement
alternates with the stat walk, so a drift in the machine touches both), each
row issue 47 sets a goal for beside that goal. Then two breakdowns: the
module's side of the kept plan and of a never-asked question (daemon up,
and none running), stage by stage as the module names them under
ZARF_PLANNER_TRACE=1 (module_stages); and the daemon's CPU on a never-asked
plan, stage by stage, from a CPU profile of testdata/bench/cache/profile
(breakdown: this checkout's code in process, whichever binaries were given),
on a daemon that planned before and on a new daemon's first plan (the
no-daemon row's request); then the daemon binary's package initialisation
(daemon_init, on the no-daemon row's connect).
Every measurement says which caches are warm: the archive cache (Badger,
its own directory under a temporary directory, never the user's), the
daemon's plan memo (in memory) and the plans kept in the archive cache
(files beside it, which outlive the daemon and which the module reads
itself). `python3 bench.py repeat N` runs the memo-hit
measurement N times and prints each run's ratio.
"""
import os
import re
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
PLANNER = os.environ.get("PLANNER") or os.path.join(ROOT, "bin", "zarf-planner")
MODULE = os.environ.get("MODULE") or os.path.join(ROOT, "bin", "zarf_planner_module")
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


def module_args(work, name, module="zarf_bundle_plan", **extra):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(dict({"path": ARCHIVES, "daemon_path": PLANNER, "state_dir": os.path.join(work, "state"),
                        "_ansible_module_name": module}, **extra), f)
    return [MODULE, path]


def stop_daemon(env):
    subprocess.run([PLANNER, "daemon", "stop"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)


def first_plans(work, env, runs=RUNS, fresh_question=False):
    """The operator's path: no daemon runs (stopped before each run, not
    timed), the archive cache is warm, and the module's plan starts the
    daemon. With fresh_question, every run asks a question never asked
    before (no memo, in memory or kept, can answer it)."""
    times, ratios = [], []
    for i in range(runs):
        stop_daemon(env)
        if fresh_question:
            cmd = module_args(work, f"first-new-{i}.json", priorities={"pkg-0001": 1000 + i})
        else:
            cmd = module_args(work, "args.json")
        walk = once(WALK)
        took = once(cmd, env)
        times.append(took)
        ratios.append(took / walk)
    return min(times), statistics.median(times), statistics.median(ratios)


def after_warm(work, env, runs=RUNS):
    """The operator's path after warm-cache.yml: before each run (not
    timed) the kept plans are removed, zarf_bundle_cache warms the
    directory (the archive cache is already warm: it reads nothing, and
    keeps the plan of the question without options) and the daemon is
    stopped; then the module's first plan, the question without options,
    is timed."""
    times, ratios = [], []
    warm = module_args(work, "warm.json", module="zarf_bundle_cache")
    for _ in range(runs):
        stop_daemon(env)
        shutil.rmtree(os.path.join(env["ZARF_PLANNER_CACHE_DIR"], "plans"), ignore_errors=True)
        once(warm, env)
        stop_daemon(env)
        cmd = module_args(work, "args.json")
        walk = once(WALK)
        took = once(cmd, env)
        times.append(took)
        ratios.append(took / walk)
    return min(times), statistics.median(times), statistics.median(ratios)


def main():
    build()
    if len(sys.argv) > 1 and sys.argv[1] == "build-only":
        return
    if len(sys.argv) > 2 and sys.argv[1] == "repeat":
        return repeat(int(sys.argv[2]))
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
        # The operator's path: the same warm archive cache, no daemon.
        first_asked = first_plans(work, denv)
        first_new = first_plans(work, denv, fresh_question=True)
        first_after_warm = after_warm(work, denv)
        stop_daemon(denv)
        module_side = module_stages(work, denv)
        plan_median, stages = breakdown(work)
        fresh_median, fresh_stages = breakdown(work, fresh=True)
        inits = daemon_init()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    n = len([f for f in os.listdir(ARCHIVES) if ".tar" in f])
    print(f"{n} distinct archives made by the zarf CLI. Each measurement ran {RUNS} times (cold: once, no cache: 3),")
    print("alternating with the stat walk; the ratio is the median of the per-pair ratios. Caches: archive = the")
    print("Badger cache of inspected archives; memo = the daemon's plans in memory; kept = plans kept as files of the")
    print("archive cache across daemons, which the module answers from alone. The page cache is warm throughout.\n")
    print("| measurement | caches | best | median | ratio to the stat walk | goal (issue 47) |")
    print("|---|---|---|---|---|---|")
    rows = [
        ("bare stat walk: `find DIR -name '*.tar*' -printf '%s %T@\\n'`", "", walk),
        ("CLI `plan`, no cache (`--use-cache=false`)", "none", nocache),
        ("CLI `plan`, cold cache (its own)", "archive cold", cold_cli),
        ("CLI `plan`, warm cache (its own)", "archive warm, kept hit", warm_cli),
        ("CLI `plan` through the daemon, cold cache", "archive cold, memo cold", cold_daemon),
        ("CLI `plan` through the daemon, warm cache", "archive warm, memo hit", warm_daemon),
        ("**module `zarf_bundle_plan`, question asked before (memo hit: the module answers from the kept plan)**", "archive warm, kept hit", warm_module, 2.5),
        ("module, a question not asked before (the daemon plans)", "archive warm, memo miss", new_question, 4),
        ("CLI `inspect` through the daemon (the scan alone)", "archive warm", warm_inspect),
        ("**module, first plan after `zarf_bundle_cache` warmed the directory, no daemon running, no options**", "archive warm, kept hit", first_after_warm),
        ("module, first plan, no daemon running, question asked before", "archive warm, kept hit", first_asked),
        ("module, first plan, no daemon running, question never asked (it starts the daemon)", "archive warm, kept miss", first_new, 8),
    ]
    for label, caches, (best, median, ratio), *goal in rows:
        met = f"≤ {goal[0]}×: {'met' if round(ratio, 1) <= goal[0] else 'not met'}" if goal else ""
        print(f"| {label} | {caches} | {best * 1000:.1f} ms | {median * 1000:.1f} ms | {ratio:.1f}× | {met} |")
    print(f"\nDaemon after the run: {stats}")
    print("\nWhere the module's time goes (`ZARF_PLANNER_TRACE=1`: the module names each stage as it ends; medians of")
    print(f"{RUNS} runs each, no daemon: {max(RUNS // 2, 3)}, each after a stat walk, and the median of each stage's ratios to")
    print("that walk, in the goals' units; the archive cache warm throughout):\n")
    print("| path | stage | median | ratio to the stat walk before the run |")
    print("|---|---|---|---|")
    if not module_side:
        print("| | the module under test names no stages (a build before ZARF_PLANNER_TRACE) | | |")
    for label, (total, ratio), rows in module_side:
        for name, took, r in rows:
            print(f"| {label} | {name} | {took:.1f} ms | {r:.2f}× |")
        print(f"| {label} | **the whole run, as the bench saw it** | **{total:.1f} ms** | **{ratio:.2f}×** |")
    print(f"\nWhere the daemon's CPU goes on a question never asked (in process, `testdata/bench/cache/profile`: its own")
    print(f"archive cache warm, no memo hit; 50 plans; server Plan median {plan_median}; the module's side of the")
    print(f"daemon-up row is that row's median less this). Each CPU sample counts for one stage:\n")
    print("| stage | CPU per plan |")
    print("|---|---|")
    for label, took in stages:
        print(f"| {label} | {took:.1f} ms |")
    print(f"| total | {sum(t for _, t in stages):.1f} ms |")
    print(f"\nThe no-daemon row's request is a new daemon's first plan. The same profile, each plan on a new server over")
    print(f"the same warm archive cache (`-fresh`: what `zarf-planner serve` does for the first request after it starts;")
    print(f"server Plan median {fresh_median}; closing each server is not timed but is profiled, as its own stage):\n")
    print("| stage | CPU per plan |")
    print("|---|---|")
    for label, took in fresh_stages:
        print(f"| {label} | {took:.1f} ms |")
    print(f"| total | {sum(t for _, t in fresh_stages):.1f} ms |")
    total, top = inits
    print(f"\nThe daemon's package initialisation, before its main (`GODEBUG=inittrace=1 zarf-planner version`, median of")
    print(f"{INIT_RUNS}; on the no-daemon row's connect stage): {total:.1f} ms; the largest: " +
          ", ".join(f"{name} {ms:.1f} ms" for name, ms in top) + ".")


# The stages of the daemon's never-asked plan, each a frame that marks it
# in a CPU sample's stack; a sample counts for the first stage listed whose
# frame is in its stack (so a stage's own calls into another stage's
# functions stay its own), and the collector's background work is its own
# stage (it runs beside the plan, on its allocations).
STAGES = [
    ("the directory's stamp (the one stat walk)", ("daemon/server.(*Memo).stampOf", "zarf-planner/stamp.List.func")),
    ("keeping the plan (files under its keys)", ("daemon/server.(*Memo).keep",)),
    ("encoding the answer", ("daemon/server.encodePlanned",)),
    ("planning (`planner.New`)", ("zarf-planner/planner.New",)),
    ("conflicts between planned packages", ("service.(*Prepared).conflictsOf",)),
    ("CRD upgrades", ("service.(*Prepared).crdUpgrades",)),
    ("content warnings", ("service.plannedContentWarnings",)),
    ("the read, answered by the archive cache", ("zarf-planner/inspect.", "zarf-planner/service.Read")),
    ("the rest of the request (memo, result, checks)", ("daemon/server.(*Server).Plan",)),
    ("the garbage collector (beside the plan)", ("runtime.gcBgMarkWorker",)),
]


def traced(cmd, env):
    """Runs a stat walk, then the module cmd once with ZARF_PLANNER_TRACE=1:
    its stages (the line it writes to standard error), the run's wall
    time and the walk's (each stage's ratio is to the walk just before it,
    as the table's rows are)."""
    walk = once(WALK)
    start = time.perf_counter()
    p = subprocess.run(cmd, env=dict(env, ZARF_PLANNER_TRACE="1"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {p.stderr.decode()}")
    lines = [l for l in p.stderr.decode().splitlines() if l.startswith(TRACE_PREFIX) and l.endswith(TRACE_SUFFIX)]
    if not lines:
        return None, took, walk  # a module of a build before ZARF_PLANNER_TRACE
    return json.loads(lines[-1][len(TRACE_PREFIX):-len(TRACE_SUFFIX)]), took, walk


# How the module encloses its stages on its line (module/stages: Prefix,
# Suffix).
TRACE_PREFIX = "zarf-planner trace: "
TRACE_SUFFIX = " (end of trace)"


def module_stages(work, env, runs=RUNS):
    """The module's side, stage by stage (ZARF_PLANNER_TRACE), on the
    three paths issue 47 names: a question asked before (the kept plan), a
    question never asked with the daemon up, and one with no daemon
    running (stopped before each run, not timed). Each path's rows are
    the medians over runs of each stage the module names, and before them
    what passed before the module's main ran (the wall time the bench saw
    less the module's own total: starting the process, the runtime and
    every package's initialisation)."""
    paths = []
    kept = module_args(work, "args.json")
    once(kept, env)  # the kept plan of this question exists
    paths.append(("question asked before (kept plan)", [traced(kept, env) for _ in range(runs)]))
    once(module_args(work, "up-warm.json", priorities={"pkg-0000": -1}), env)  # the daemon is up
    paths.append(("question never asked, daemon up",
                  [traced(module_args(work, f"up-{i}.json", priorities={"pkg-0000": 100000 + i}), env) for i in range(runs)]))
    cold = []
    for i in range(max(runs // 2, 3)):
        stop_daemon(env)
        cold.append(traced(module_args(work, f"cold-{i}.json", priorities={"pkg-0002": 200000 + i}), env))
    stop_daemon(env)
    paths.append(("question never asked, no daemon running", cold))
    out = []
    for label, results in paths:
        if any(line is None for line, _, _ in results):
            return []  # the module under test names no stages
        names = []
        for line, _, _ in results:
            for st in line["zarf_planner_stages"]:
                if st["stage"] not in names:
                    names.append(st["stage"])
        # Each stage's median in ms, and the median of its ratios to the
        # stat walk that ran just before each run.
        outside = [(took * 1000 - line["total_ms"], walk) for line, took, walk in results]
        rows = [("outside the module's main (the bench starting it, the process's start and exit, the runtime's and every package's initialisation)",
                 statistics.median(ms for ms, _ in outside), statistics.median(ms / (walk * 1000) for ms, walk in outside))]
        for n in names:
            # A stage named twice in a run (a kept answer refused, then
            # the daemon's written) counts once, summed; the median is of
            # the runs that named it.
            ran = [(sum(st["ms"] for st in line["zarf_planner_stages"] if st["stage"] == n), walk) for line, _, walk in results
                   if any(st["stage"] == n for st in line["zarf_planner_stages"])]
            rows.append((n if len(ran) == len(results) else f"{n} (in {len(ran)} of {len(results)} runs)",
                         statistics.median(ms for ms, _ in ran), statistics.median(ms / (walk * 1000) for ms, walk in ran)))
        whole = (statistics.median(took * 1000 for _, took, _ in results), statistics.median(took / walk for _, took, walk in results))
        out.append((label, whole, rows))
    return out


# pprof's units of time, in milliseconds.
UNITS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0, "mins": 60000.0, "hrs": 3600000.0}


def milliseconds(value):
    """A sample's time as pprof -traces prints it ("10ms", "1.50s"), in
    milliseconds; anything else is an error, not a zero."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([a-zµ]+)", value)
    if not m or m.group(2) not in UNITS:
        raise SystemExit(f"pprof -traces printed a sample's time as {value!r}, which this bench cannot read")
    return float(m.group(1)) * UNITS[m.group(2)]


# The stages of a new daemon's first plan (breakdown's fresh mode): those
# of STAGES, after opening the archive cache and closing the server before.
FRESH_STAGES = [
    ("closing the server before (not timed: a daemon's exit)", ("daemon/server.(*Server).Close",)),
    ("opening the archive cache (a daemon's Preopen)", ("zarf-planner/cache.open",)),
] + STAGES

INIT_RUNS = 10


def daemon_init(runs=INIT_RUNS):
    """The daemon binary's package initialisation: GODEBUG=inittrace=1's
    clock times summed per run, the median of runs, and the five largest
    packages (their medians)."""
    totals, per = [], {}
    for _ in range(runs):
        err = subprocess.run([PLANNER, "version"], env=dict(os.environ, GODEBUG="inittrace=1"), check=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
        total = 0.0
        for line in err.splitlines():
            m = re.match(r"init (\S+) @\S+ ms, ([0-9.]+) ms clock", line)
            if m:
                total += float(m.group(2))
                per.setdefault(m.group(1), []).append(float(m.group(2)))
        totals.append(total)
    if not per:
        raise SystemExit(f"{PLANNER} version printed no inittrace lines")
    top = sorted(((n, statistics.median(v)) for n, v in per.items()), key=lambda x: -x[1])[:5]
    return statistics.median(totals), top


def breakdown(work, runs=50, fresh=False):
    """Where the daemon's never-asked plan spends its CPU, stage by stage:
    testdata/bench/cache/profile (one daemon.Server in process, its own
    archive cache warmed by a first plan, not timed; the page cache warm)
    times `runs` plans, each a question not asked before, with a CPU
    profile; each sample is given to one stage (STAGES). Returns the
    server's median Plan time and rows (stage, ms of CPU per plan). With
    fresh, each plan is a new server's first (FRESH_STAGES)."""
    exe = os.path.join(work, "profile")
    prof = os.path.join(work, "plan.pprof")
    stages = FRESH_STAGES if fresh else STAGES
    subprocess.run(["go", "build", "-o", exe, "./testdata/bench/cache/profile"], cwd=ROOT, check=True)
    out = subprocess.run([exe, "-dir", ARCHIVES, "-n", str(runs), "-cpuprofile", prof] + (["-fresh"] if fresh else []), cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    median = out.strip().rsplit("median ", 1)[1]
    allocated = out.split("allocated per plan: ", 1)[1].split("\n", 1)[0]
    traces = subprocess.run(["go", "tool", "pprof", "-traces", exe, prof], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    ms = {label: 0.0 for label, _ in stages}
    other = 0.0
    for block in traces.split("-----------+-------------------------------------------------------")[1:]:
        lines = [l for l in block.strip().splitlines() if l.strip()]
        if not lines:
            continue
        value, _, first = lines[0].strip().partition(" ")
        took = milliseconds(value)
        frames = [first.strip()] + [l.strip() for l in lines[1:]]
        for label, marks in stages:
            if any(m in f for f in frames for m in marks):
                ms[label] += took
                break
        else:
            other += took
    rows = [(label, ms[label] / runs) for label, _ in stages]
    rows.append(("outside the plan (the tool's own loop, the cache's background work)", other / runs))
    return f"{median}, {allocated} allocated a plan", rows


def repeat(n):
    """The module's memo hit, n runs of RUNS pairs each (one daemon, a
    warm archive cache of its own): each run's median ratio."""
    work = tempfile.mkdtemp(prefix="zp-bench-cache-")
    try:
        env = dict(os.environ, ZARF_PLANNER_STATE_DIR=os.path.join(work, "state"), ZARF_PLANNER_CACHE_DIR=os.path.join(work, "cache"))
        subprocess.run(["cat"] + [os.path.join(ARCHIVES, f) for f in os.listdir(ARCHIVES)], stdout=subprocess.DEVNULL, check=True)
        once(module_args(work, "args.json"), env)  # starts the daemon, fills the cache and the memo
        ratios = [paired(module_args(work, "args.json"), env=env)[2] for _ in range(n)]
        stop_daemon(env)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("module memo hit, ratio to the stat walk, per run: " + ", ".join(f"{r:.2f}×" for r in ratios))


if __name__ == "__main__":
    main()
