#!/usr/bin/env python3
"""make bench-inspect: archive inspection speed against its references.

Builds (once, cached under .cache/bench/inspect) real Zarf archives with the
zarf CLI: a "large" directory of 20 packages (three of ~260 MB: two of random
bytes and one of compressible text; seventeen of 8-24 MB, alternating random
and compressible) and a "small" directory of 100 distinct small packages.
Then, with the page cache warm so every tool reads the same bytes from
memory, it measures in one run:

- zarf-planner inspect on the large directory (all cores, and GOMAXPROCS=1);
- `zstd -dc` of the same archives, one after another, to /dev/null;
- zarf-planner inspect on the small directory, and
  `zarf package inspect documentation` run once per small archive;

and prints the ratios and peak memory (max RSS) as a markdown table.
"""
import os
import random
import shutil
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
    """Runs cmd under GNU time; returns (seconds, max RSS in MiB) of cmd.

    GNU time forks from a small process, so the peak RSS is the command's
    own (a fork of this Python interpreter would count its memory too)."""
    with tempfile.NamedTemporaryFile("r") as out:
        p = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", out.name] + cmd, env=env, stdout=stdout, stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise SystemExit(f"{cmd[0]} failed: {p.stderr.decode()}")
        elapsed, rss_kb = out.read().split()[-2:]
    return float(elapsed), int(rss_kb) / 1024


def best(n, f):
    results = [f() for _ in range(n)]
    return min(results, key=lambda r: r[0])


def archives(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".tar.zst"))


def main():
    large, small = ensure_fixtures()
    total = sum(os.path.getsize(a) for a in archives(large))
    for a in archives(large) + archives(small):  # warm the page cache
        with open(a, "rb") as f:
            while f.read(16 * MB):
                pass
    env1 = dict(os.environ, GOMAXPROCS="1")
    ours, ours_rss = best(3, lambda: run([PLANNER, "inspect", large, "-o", "json"]))
    ours1, ours1_rss = best(3, lambda: run([PLANNER, "inspect", large, "-o", "json"], env=env1))

    def zstd_all():
        t, rss = 0.0, 0.0
        for a in archives(large):
            e, r = run(["zstd", "-q", "-dc", a])
            t, rss = t + e, max(rss, r)
        return t, rss
    zstd_t, zstd_rss = best(3, zstd_all)
    ours_small, small_rss = best(3, lambda: run([PLANNER, "inspect", small, "-o", "json"]))

    def zarf_all():
        t = 0.0
        with tempfile.TemporaryDirectory() as out:
            for a in archives(small):
                e, _ = run([ZARF, "package", "inspect", "documentation", a, "--output", out, "--log-level", "warn", "--no-color"])
                t += e
        return t, 0.0
    zarf_t, _ = zarf_all()

    print(f"Large directory: {len(archives(large))} archives, {total / MB:.0f} MiB compressed. "
          f"Small directory: {len(archives(small))} archives. {os.cpu_count()} cores.\n")
    print("| measurement | time | peak RSS | ratio |")
    print("|---|---|---|---|")
    print(f"| `zstd -dc` of every large archive, one after another | {zstd_t:.2f} s | {zstd_rss:.0f} MiB | 1.00× (reference) |")
    print(f"| zarf-planner inspect, large directory (all cores) | {ours:.2f} s | {ours_rss:.0f} MiB | {ours / zstd_t:.2f}× zstd |")
    print(f"| zarf-planner inspect, large directory, GOMAXPROCS=1 | {ours1:.2f} s | {ours1_rss:.0f} MiB | {ours1 / zstd_t:.2f}× zstd |")
    print(f"| `zarf package inspect documentation`, once per small archive | {zarf_t:.2f} s | | 1.00× (reference) |")
    print(f"| zarf-planner inspect, small directory | {ours_small:.3f} s | {small_rss:.0f} MiB | {zarf_t / ours_small:.0f}× faster than zarf |")


if __name__ == "__main__":
    main()
