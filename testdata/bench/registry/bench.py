#!/usr/bin/env python3
"""make bench-registry: planning from an OCI registry (issue 33).

Builds once (cached under .cache/bench/registry/archives) N (default 100)
distinct Zarf packages with the zarf CLI, each carrying one image of a
SIZE-byte (default 3 MiB) pseudo-random layer (served for the build by
testdata/registry) and requiring the one before it. Then, in one run, with
a fresh registry (Debian's docker-registry, its own storage) that the real
`zarf package publish --plain-http` fills, it measures:

- bytes: what a cold plan of oci://HOST/bench fetches against what `zarf
  package pull` of every package fetches (the same registry, both counted
  by a byte-counting proxy in front of it, independent of the planner's
  own count);
- a cold plan of the registry (an empty archive cache of its own) against
  a cold plan of the same archives in a directory (another empty cache);
- a warm plan of the registry (its cache warm, through a running daemon,
  the operator's path) against a bare listing: one catalog call and one
  tag list per repository over one keep-alive connection, which any
  registry planner must make (the warm plan also resolves each tag's
  index, since tags move).

Every plan uses its own cache and state directories under a temporary
directory; nothing of the user's is read. Prints a markdown table.
"""
import http.client
import http.server
import json
import os
import resource
import shutil
import socket
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BASE = os.path.join(ROOT, ".cache", "bench", "registry")
ZARF = os.path.join(ROOT, ".tools", "bin", "zarf")
PLANNER = os.environ.get("PLANNER") or os.path.join(ROOT, "bin", "zarf-planner")
REGISTRY = "/usr/bin/docker-registry"
N = int(os.environ.get("N", "100"))
SIZE = int(os.environ.get("SIZE", str(3 << 20)))
ARCHIVES = os.path.join(BASE, f"archives-{N}-{SIZE}")
IMAGE_HOST = "127.0.0.1:47391"
RUNS = 10
# What the proxy of the "across a network" row holds each answer for.
DELAY = float(os.environ.get("DELAY_MS", "10")) / 1000


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def build():
    stamp = os.path.join(ARCHIVES, ".built")
    if os.path.exists(stamp):
        return
    shutil.rmtree(ARCHIVES, ignore_errors=True)
    os.makedirs(ARCHIVES)
    src = os.path.join(BASE, "src")
    ready = os.path.join(BASE, "images.ready")
    if os.path.exists(ready):
        os.remove(ready)
    binary = os.path.join(BASE, "registry-bin")
    subprocess.run(["go", "build", "-o", binary, "./testdata/registry"], cwd=ROOT, check=True)
    images = [f"{IMAGE_HOST}/bench/img-{i:03d}:1.0.0" for i in range(N)]
    args = [binary, "-ready", ready, "-size", str(SIZE)]
    for im in images:
        args += ["-image", im]
    reg = subprocess.Popen(args, stdin=subprocess.PIPE)
    try:
        for _ in range(600):
            if os.path.exists(ready):
                break
            time.sleep(0.1)
        else:
            raise SystemExit("the image registry did not start")
        for i in range(N):
            name = f"svc-{i:03d}"
            d = os.path.join(src, name)
            os.makedirs(os.path.join(d, "docs"), exist_ok=True)
            with open(os.path.join(d, "cm.yaml"), "w") as f:
                f.write(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: bench\ndata:\n  index: \"{i}\"\n")
            with open(os.path.join(d, "zarf.yaml"), "w") as f:
                f.write(f"kind: ZarfPackageConfig\nmetadata:\n  name: {name}\n  version: 1.0.{i}\n"
                        "documentation:\n  prerequisites: docs/prerequisites.yaml\ncomponents:\n  - name: svc\n    required: true\n"
                        f"    manifests:\n      - name: cm\n        namespace: bench\n        files:\n          - cm.yaml\n"
                        f"    images:\n      - {images[i]}\n")
            reqs = f"requires:\n  packages:\n    - name: svc-{i - 1:03d}\n" if i else ""
            with open(os.path.join(d, "docs", "prerequisites.yaml"), "w") as f:
                f.write(f"apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata:\n  package: {name}\n  version: 1.0.{i}\n{reqs}")
            subprocess.run([ZARF, "package", "create", d, "--confirm", "--architecture", "amd64", "--skip-sbom", "--plain-http",
                            "--output", ARCHIVES, "--log-level", "warn", "--no-color"], check=True, stdout=subprocess.DEVNULL,
                           env=dict(os.environ, HOME=os.path.join(BASE, "home")))
            shutil.rmtree(d)
            if i % 20 == 19:
                print(f"built {i + 1} archives", file=sys.stderr)
    finally:
        reg.stdin.close()
        reg.wait(timeout=60)
    open(stamp, "w").close()


class Counter:
    def __init__(self):
        self.bytes = 0
        self.lock = threading.Lock()

    def add(self, n):
        with self.lock:
            self.bytes += n


def start_proxy(target_port, counter, delay=0.0):
    """A byte-counting HTTP proxy in front of the registry: every byte of
    every answer body and header it passes on is counted. With delay,
    each answer is held that many seconds first (a registry across a
    network)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # A TLS hello is answered with an HTTP status line (not 0.9), so
        # zarf's scheme probe sees plain HTTP on this port.
        default_request_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def handle(self):
            # A client that hangs up (zarf closes its probe connections)
            # ends that connection only.
            try:
                super().handle()
            except (ConnectionResetError, BrokenPipeError):
                pass

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            conn = http.client.HTTPConnection("127.0.0.1", target_port, timeout=120)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            headers["Host"] = self.headers.get("Host", "")
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            if delay:
                time.sleep(delay)
            counter.add(len(data))
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() in ("transfer-encoding", "connection", "content-length"):
                    continue
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            conn.close()

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    srv = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def once(cmd, env=None):
    start = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {p.stderr.decode()}")
    return took


def cpu_of(pid):
    """The CPU seconds process pid has spent (user and system)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_costs(host, pid, n=50):
    """The registry server's CPU seconds per answer: a tag list, a
    manifest by tag (the index), a manifest by digest and a small blob
    (zarf.yaml) of the first repository, each asked n times."""
    conn = http.client.HTTPConnection(host)
    accept = {"Accept": "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json"}

    def get(path, headers=None):
        conn.request("GET", path, headers=headers or {})
        return conn.getresponse().read()

    repo = json.loads(get("/v2/_catalog?n=1000"))["repositories"][0]
    tag = json.loads(get(f"/v2/{repo}/tags/list?n=1000"))["tags"][0]
    index = json.loads(get(f"/v2/{repo}/manifests/{tag}", accept))
    manifest = index["manifests"][0]["digest"]
    layers = json.loads(get(f"/v2/{repo}/manifests/{manifest}", accept))["layers"]
    blob = next(l["digest"] for l in layers if l.get("annotations", {}).get("org.opencontainers.image.title") == "zarf.yaml")
    out = {}
    for name, path, headers in [("tag list", f"/v2/{repo}/tags/list?n=1000", None), ("manifest by tag", f"/v2/{repo}/manifests/{tag}", accept),
                                ("manifest by digest", f"/v2/{repo}/manifests/{manifest}", accept), ("blob (zarf.yaml)", f"/v2/{repo}/blobs/{blob}", None)]:
        before = cpu_of(pid)
        for _ in range(n):
            get(path, headers)
        out[name] = (cpu_of(pid) - before) / n
    conn.close()
    return out


def listing(host):
    """The bare listing: the catalog, then each repository's tags, over one
    keep-alive connection."""
    start = time.perf_counter()
    conn = http.client.HTTPConnection(host)
    conn.request("GET", "/v2/_catalog?n=1000")
    repos = json.loads(conn.getresponse().read())["repositories"]
    for r in repos:
        conn.request("GET", f"/v2/{r}/tags/list?n=1000")
        json.loads(conn.getresponse().read())
    conn.close()
    return time.perf_counter() - start


def main():
    build()
    if len(sys.argv) > 1 and sys.argv[1] == "build-only":
        return
    work = tempfile.mkdtemp(prefix="zp-bench-registry-")
    reg = None
    try:
        port = free_port()
        host = f"127.0.0.1:{port}"
        with open(os.path.join(work, "config.yml"), "w") as f:
            f.write(f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {work}/data\nhttp:\n  addr: {host}\n")
        reg = subprocess.Popen([REGISTRY, "serve", os.path.join(work, "config.yml")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://{host}/v2/")
                break
            except Exception:
                time.sleep(0.05)
        archives = sorted(os.path.join(ARCHIVES, a) for a in os.listdir(ARCHIVES) if a.endswith(".tar.zst"))
        home = os.path.join(work, "home")
        for a in archives:
            subprocess.run([ZARF, "package", "publish", a, f"oci://{host}/bench", "--plain-http", "--log-level", "warn", "--no-color"],
                           check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, HOME=home))
        archive_bytes = sum(os.path.getsize(a) for a in archives)
        counter = Counter()
        proxy = start_proxy(port, counter)
        phost = f"127.0.0.1:{proxy.server_address[1]}"
        env = lambda name: dict(os.environ, HOME=home, ZARF_PLANNER_STATE_DIR=os.path.join(work, name, "state"),
                                ZARF_PLANNER_CACHE_DIR=os.path.join(work, name, "cache"))
        # Bytes: a cold plan through the proxy, then zarf package pull of
        # every package through it.
        counter.bytes = 0
        once([PLANNER, "plan", f"oci://{phost}/bench", "--plain-http", "-o", "json"], env("bytes"))
        plan_bytes = counter.bytes
        counter.bytes = 0
        pulled = os.path.join(work, "pulled")
        os.makedirs(pulled)
        for i in range(N):
            once([ZARF, "package", "pull", f"oci://{phost}/bench/svc-{i:03d}:1.0.{i}", "--plain-http", "-o", pulled,
                  "--log-level", "warn", "--no-color"], dict(os.environ, HOME=os.path.join(work, f"pullhome-{i}")))
        pull_bytes = counter.bytes
        proxy.shutdown()
        # Cold plans (each run its own empty cache), alternating; with the
        # CPU the planner and the registry server spent on each.
        cold_reg, cold_dir = [], []
        cpu_dir, cpu_reg, cpu_server = [], [], []
        for i in range(3):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            cold_dir.append(once([PLANNER, "plan", ARCHIVES, "-o", "json"], env(f"cold-dir-{i}")))
            mid = resource.getrusage(resource.RUSAGE_CHILDREN)
            server = cpu_of(reg.pid)
            cold_reg.append(once([PLANNER, "plan", f"oci://{host}/bench", "--plain-http", "-o", "json"], env(f"cold-reg-{i}")))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_server.append(cpu_of(reg.pid) - server)
            cpu_dir.append(mid.ru_utime + mid.ru_stime - before.ru_utime - before.ru_stime)
            cpu_reg.append(after.ru_utime + after.ru_stime - mid.ru_utime - mid.ru_stime)
        # Cold plans of the registry across a network: every answer held
        # DELAY first (by a proxy), against the directory's cold plans.
        # The same proxy holding nothing shows what the proxy (Python, a
        # connection to the registry per request) costs by itself.
        cold_far, cold_near = [], []
        for i in range(3):
            for delay, out in ((DELAY, cold_far), (0.0, cold_near)):
                slow = start_proxy(port, Counter(), delay=delay)
                shost = f"127.0.0.1:{slow.server_address[1]}"
                out.append(once([PLANNER, "plan", f"oci://{shost}/bench", "--plain-http", "-o", "json"], env(f"cold-proxy-{delay}-{i}")))
                slow.shutdown()
        # What the registry server spends on one answer of each kind a
        # cold plan asks for (50 of each, over one connection), the
        # planner not running.
        per_answer = server_costs(host, reg.pid)
        # Warm: through a running daemon whose cache is warm.
        denv = env("daemon")
        daemon = subprocess.Popen([PLANNER, "serve"], env=denv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        plan = [PLANNER, "plan", f"oci://{host}/bench", "--plain-http", "-o", "json"]
        once(plan, denv)
        warm, bare, ratios = [], [], []
        for _ in range(RUNS):
            b = listing(host)
            w = once(plan, denv)
            bare.append(b)
            warm.append(w)
            ratios.append(w / b)
        subprocess.run([PLANNER, "daemon", "stop"], env=denv, stdout=subprocess.DEVNULL)
        daemon.wait(timeout=30)
        md = statistics.median
        print(f"{N} packages, each one image of a {SIZE} byte layer; archives {archive_bytes} bytes in all\n")
        print("| measurement | result | reference | ratio | goal |")
        print("|---|---|---|---|---|")
        print(f"| bytes a cold plan fetched vs `zarf package pull` of every package | {plan_bytes} B | {pull_bytes} B | {plan_bytes / pull_bytes * 100:.2f} % | ≤ 1 % |")
        print(f"| cold plan of the registry vs cold plan of the same archives in a directory (median of 3) | {md(cold_reg):.2f} s | {md(cold_dir):.2f} s | {md(cold_reg) / md(cold_dir):.2f}x | ≤ 1.5x |")
        print(f"| cold plan of the registry through a proxy that holds each answer {DELAY * 1000:.0f} ms (a registry across a network), vs through the same proxy holding nothing (median of 3) | {md(cold_far):.2f} s | {md(cold_near):.2f} s | {md(cold_far) / md(cold_near):.2f}x | — |")
        print(f"| warm plan of the registry through the daemon vs a bare listing (catalog + tags), median of {RUNS} pairs | {md(warm) * 1000:.0f} ms | {md(bare) * 1000:.0f} ms | {md(ratios):.2f}x | ≤ 3x |")
        print(f"\nCPU of the cold plans (median of 3): the planner {md(cpu_reg):.2f} s for the registry, {md(cpu_dir):.2f} s for the directory; "
              f"the registry server (on the same 2 cores) {md(cpu_server):.2f} s while serving the registry's plan")
        print("the registry server's CPU per answer: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in per_answer.items()))
    finally:
        if reg:
            reg.kill()
            reg.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
