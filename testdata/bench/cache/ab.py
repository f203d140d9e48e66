#!/usr/bin/env python3
"""Two builds side by side on the operator's paths, in one run.

    python3 testdata/bench/cache/ab.py BEFORE_BIN_DIR [AFTER_BIN_DIR] [RUNS]

Each bin directory holds zarf-planner and zarf_planner_module (AFTER
defaults to this checkout's bin/). On the 1,000 archives of make
bench-cache, with a warm archive cache of each build's own (in a temporary
directory, never the user's), every round runs, for each build in turn, a
stat walk and then:

- first: no daemon runs (stopped before, not timed); the module's plan
  starts one. The question was asked before, by an earlier daemon.
- hit: the daemon runs and has answered the question (memo hit).
- new: no daemon runs; the module's plan is of a question never asked
  (a priority that changes nothing in the plan, new each round), so the
  daemon it starts reads the archive cache and plans.

Each ratio is the median of the per-pair ratios (measurement / the stat
walk just before it), so a drift in the machine touches both builds alike.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import bench  # noqa: E402


def main():
    before = os.path.abspath(sys.argv[1])
    after = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(bench.ROOT, "bin")
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    work = tempfile.mkdtemp(prefix="zp-bench-ab-")
    try:
        subprocess.run(["cat"] + [os.path.join(bench.ARCHIVES, f) for f in os.listdir(bench.ARCHIVES)], stdout=subprocess.DEVNULL, check=True)
        builds = {}
        for name, bindir in (("before", before), ("after", after)):
            w = os.path.join(work, name)
            os.makedirs(w)
            env = dict(os.environ, ZARF_PLANNER_STATE_DIR=os.path.join(w, "state"), ZARF_PLANNER_CACHE_DIR=os.path.join(w, "cache"))
            planner = os.path.join(bindir, "zarf-planner")
            args = os.path.join(w, "args.json")
            with open(args, "w") as f:
                f.write('{"path": "%s", "daemon_path": "%s", "state_dir": "%s", "_ansible_module_name": "zarf_bundle_plan"}'
                        % (bench.ARCHIVES, planner, os.path.join(w, "state")))
            cmd = [os.path.join(bindir, "zarf_planner_module"), args]
            bench.once(cmd, env)  # reads every archive into the cache, answers the question once
            builds[name] = (env, planner, cmd, {"first": [], "hit": [], "new": []})
        for i in range(runs):
            for name, (env, planner, cmd, ratios) in builds.items():
                stop = [planner, "daemon", "stop"]
                subprocess.run(stop, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
                walk = bench.once(bench.WALK)
                ratios["first"].append(bench.once(cmd, env) / walk)
                walk = bench.once(bench.WALK)
                ratios["hit"].append(bench.once(cmd, env) / walk)
                subprocess.run(stop, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
                new = os.path.join(os.path.dirname(cmd[1]), f"new-{i}.json")
                with open(new, "w") as f:
                    f.write('{"path": "%s", "daemon_path": "%s", "state_dir": "%s", "priorities": {"pkg-0001": %d}, "_ansible_module_name": "zarf_bundle_plan"}'
                            % (bench.ARCHIVES, planner, env["ZARF_PLANNER_STATE_DIR"], 1000 + i))
                walk = bench.once(bench.WALK)
                ratios["new"].append(bench.once([cmd[0], new], env) / walk)
        for name, (env, planner, cmd, ratios) in builds.items():
            subprocess.run([planner, "daemon", "stop"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{runs} rounds; median of per-pair ratios to the stat walk")
    print("| build | first plan, no daemon running (archive cache warm, question asked before) | memo hit (daemon running) | first plan, no daemon running, question never asked |")
    print("|---|---|---|---|")
    for name, (_, _, _, ratios) in builds.items():
        print(f"| {name} | {statistics.median(ratios['first']):.1f}× | {statistics.median(ratios['hit']):.2f}× | {statistics.median(ratios['new']):.1f}× |")


if __name__ == "__main__":
    main()
