#!/usr/bin/env python3
"""make bench-inspect: archive inspection speed against its references.

Builds (once, cached under .cache/bench/inspect) real Zarf archives with the
zarf CLI: a "large" directory of 20 packages (three of ~260 MB: two of random
bytes and one of compressible text; seventeen of 8-24 MB, alternating random
and compressible) and a "small" directory of 100 distinct small packages.
Then, with the page cache warm so every tool reads the same bytes from
memory, it measures in one run:

- zarf-planner inspect on the large directory with its cache off
  (`--use-cache=false`: every archive read in full, a cold read), at
  GOMAXPROCS=1 and with every core, in its own cache and state
  directories (never the user's);
- `zstd -dc` of the same archives, one after another, to /dev/null;
- `openssl dgst -sha256` of the same archives: the identity hash every
  archive needs (its sha256 keys the cache and names it in the plan),
  which zstd does not compute, so that the floor of a cold read
  (decompress and hash every byte) shows beside the reference;
- zarf-planner inspect on the small directory, and
  `zarf package inspect documentation` run once per small archive;

and prints wall and CPU (user + system) times, their ratios to zstd and
peak memory (max RSS) as a markdown table.
"""
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CACHE = os.path.join(ROOT, ".cache", "bench", "inspect")
ZARF = os.path.join(ROOT, ".tools", "bin", "zarf")
PLANNER = os.path.join(ROOT, "bin", "zarf-planner")
MB = 1 << 20

PREREQ = """apiVersion: colonel-byte.dev/v1alpha1
kind: PackagePrerequisites
metadata:
  package: {name}
  version: {version}
{requires}"""

ZARF_YAML = """kind: ZarfPackageConfig
metadata:
  name: {name}
  version: {version}
  description: benchmark package
documentation:
  prerequisites: docs/prerequisites.yaml
components:
  - name: payload
    required: true
{files}"""


def payload(path, size, compressible, seed):
    r = random.Random(seed)
    with open(path, "wb") as f:
        left = size
        while left > 0:
            n = min(left, 4 * MB)
            if compressible:
                lines, total = [], 0
                while total < n:
                    line = f"{r.randrange(10**6):06d} INFO service=api request={r.randrange(10**9)} status=200 path=/v1/items\n"
                    lines.append(line)
                    total += len(line)
                chunk = "".join(lines).encode()[:n]
            else:
                chunk = r.randbytes(n)
            f.write(chunk)
            left -= n


def build(pkg_dir, out, name, version, requires, size=0, compressible=False, seed=0):
    os.makedirs(os.path.join(pkg_dir, "docs"), exist_ok=True)
    files = ""
    if size:
        payload(os.path.join(pkg_dir, "payload.bin"), size, compressible, seed)
        files = "    files:\n      - source: payload.bin\n        target: /var/lib/bench/payload.bin\n"
    else:
        with open(os.path.join(pkg_dir, "cm.yaml"), "w") as f:
            f.write(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n")
        files = "    manifests:\n      - name: m\n        namespace: default\n        files:\n          - cm.yaml\n"
    with open(os.path.join(pkg_dir, "zarf.yaml"), "w") as f:
        f.write(ZARF_YAML.format(name=name, version=version, files=files))
    with open(os.path.join(pkg_dir, "docs", "prerequisites.yaml"), "w") as f:
        f.write(PREREQ.format(name=name, version=version, requires=requires))
    subprocess.run([ZARF, "package", "create", pkg_dir, "--confirm", "--architecture", "amd64", "--skip-sbom",
                    "--output", out, "--log-level", "warn", "--no-color"], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(pkg_dir)


def ensure_fixtures():
    large, small = os.path.join(CACHE, "large"), os.path.join(CACHE, "small")
    stamp = os.path.join(CACHE, "built-v1")
    if os.path.exists(stamp):
        return large, small
    shutil.rmtree(CACHE, ignore_errors=True)
    os.makedirs(large), os.makedirs(small)
    src = os.path.join(CACHE, "src")
    for i in range(20):
        if i < 3:
            size, compressible = 260 * MB, i == 2
        else:
            size, compressible = (8 + (i * 7) % 17) * MB, i % 2 == 1
        req = f"requires:\n  packages:\n    - name: large-{i-1:02d}\n" if i else ""
        print(f"building large-{i:02d} ({size // MB} MB, {'compressible' if compressible else 'random'})", file=sys.stderr)
        build(os.path.join(src, f"large-{i:02d}"), large, f"large-{i:02d}", "1.0.0", req, size, compressible, i)
    for i in range(100):
        req = f"requires:\n  packages:\n    - name: small-{i-1:03d}\n" if i else ""
        build(os.path.join(src, f"small-{i:03d}"), small, f"small-{i:03d}", f"1.{i}.0", req)
    print("built 100 small archives", file=sys.stderr)
    open(stamp, "w").close()
    return large, small


def run(cmd, env=None, stdout=subprocess.DEVNULL):
    """Runs cmd under GNU time; returns (wall seconds, CPU seconds (user +
    system), max RSS in MiB) of cmd.

    GNU time forks from a small process, so the peak RSS is the command's
    own (a fork of this Python interpreter would count its memory too)."""
    with tempfile.NamedTemporaryFile("r") as out:
        p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", out.name] + cmd, env=env, stdout=stdout, stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise SystemExit(f"{cmd[0]} failed: {p.stderr.decode()}")
        elapsed, user, system, rss_kb = out.read().split()[-4:]
    return float(elapsed), float(user) + float(system), int(rss_kb) / 1024


def archives(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".tar.zst"))


# The CPU time of the same read moves by up to 20 % from one run to the
# next on a shared machine; nine rounds steady the median of the
# per-round ratios (each round is about 4 s).
ROUNDS = 9


def main():
    large, small = ensure_fixtures()
    total = sum(os.path.getsize(a) for a in archives(large))
    for a in archives(large) + archives(small):  # warm the page cache
        with open(a, "rb") as f:
            while f.read(16 * MB):
                pass
    work = tempfile.mkdtemp(prefix="zp-bench-inspect-")
    try:
        # Its own cache and state directories: no daemon of the user's is
        # found, and nothing of the user's cache is read or written. Every
        # inspect runs with the cache off (--use-cache=false), so every
        # run reads every archive in full: a cold read.
        env = dict(os.environ, ZARF_PLANNER_STATE_DIR=os.path.join(work, "state"),
                   ZARF_PLANNER_CACHE_DIR=os.path.join(work, "cache"), XDG_CACHE_HOME=os.path.join(work, "xdg"))
        env.pop("GOMAXPROCS", None)
        env1 = dict(env, GOMAXPROCS="1")
        cold = ["--use-cache=false", "-o", "json"]

        def zstd_all():
            t, cpu, rss = 0.0, 0.0, 0.0
            for a in archives(large):
                e, c, r = run(["zstd", "-q", "-dc", a])
                t, cpu, rss = t + e, cpu + c, max(rss, r)
            return t, cpu, rss
        # Rounds alternate the reference and both of ours, so a drift in
        # the machine's speed touches all three alike; each ratio is the
        # median of the per-round ratios.
        openssl = shutil.which("openssl")
        rows = {"zstd": [], "sha": [], "ours1": [], "ours": []}
        for _ in range(ROUNDS):
            rows["zstd"].append(zstd_all())
            if openssl:
                rows["sha"].append(run([openssl, "dgst", "-sha256"] + archives(large)))
            rows["ours1"].append(run([PLANNER, "inspect", large] + cold, env=env1))
            rows["ours"].append(run([PLANNER, "inspect", large] + cold, env=env))
        if os.path.exists(os.path.join(work, "cache")):
            raise SystemExit("inspect --use-cache=false created a cache directory")
        small_runs = [run([PLANNER, "inspect", small] + cold, env=env) for _ in range(3)]

        def zarf_all():
            t = 0.0
            with tempfile.TemporaryDirectory() as out:
                for a in archives(small):
                    e, _, _ = run([ZARF, "package", "inspect", "documentation", a, "--output", out, "--log-level", "warn", "--no-color"],
                                  env=dict(env, HOME=os.path.join(work, "home")))
                    t += e
            return t
        zarf_t = zarf_all()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def med(xs):
        return statistics.median(xs)

    def ratio(name, i):
        return med([r[i] / z[i] for r, z in zip(rows[name], rows["zstd"])])

    def floor_ratio(name):
        return med([r[1] / (z[1] + h[1]) for r, z, h in zip(rows[name], rows["zstd"], rows["sha"])])
    print(f"Large directory: {len(archives(large))} archives, {total / MB:.0f} MiB compressed. "
          f"Small directory: {len(archives(small))} archives. {os.cpu_count()} cores. Page cache warm; "
          f"zarf-planner cache off (`--use-cache=false`, own empty cache and state directories): every run reads every archive.\n")
    print(f"Medians of {ROUNDS} rounds; each round runs the reference and both of ours; ratios are medians of the per-round ratios.\n")
    print("| measurement | wall | CPU (user+sys) | peak RSS | wall ratio | CPU ratio |")
    print("|---|---|---|---|---|---|")
    for name, label in (("zstd", "`zstd -dc` of every large archive, one after another (reference)"),
                        ("sha", "`openssl dgst -sha256` of every large archive (the identity hash zstd does not compute)"),
                        ("ours1", "zarf-planner inspect, large directory, GOMAXPROCS=1"),
                        ("ours", f"zarf-planner inspect, large directory, all cores ({os.cpu_count()})")):
        rs = rows[name]
        if not rs:
            print(f"| {label} | not measured: no openssl on PATH | | | | |")
            continue
        print(f"| {label} | {med([r[0] for r in rs]):.2f} s | {med([r[1] for r in rs]):.2f} s | {max(r[2] for r in rs):.0f} MiB "
              f"| {ratio(name, 0):.2f}× | {ratio(name, 1):.2f}× |")
    if rows["sha"]:
        print(f"| zarf-planner inspect, GOMAXPROCS=1, CPU against zstd's and sha256's together | | | | | {floor_ratio('ours1'):.2f}× |")
    ours_small = med([r[0] for r in small_runs])
    print(f"| `zarf package inspect documentation`, once per small archive | {zarf_t:.2f} s | | | 1.00× (reference) | |")
    print(f"| zarf-planner inspect, small directory | {ours_small:.3f} s | {med([r[1] for r in small_runs]):.3f} s "
          f"| {max(r[2] for r in small_runs):.0f} MiB | {zarf_t / ours_small:.0f}× faster than zarf | |")


if __name__ == "__main__":
    main()
