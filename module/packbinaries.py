#!/usr/bin/env python3
"""Packs the collection's binaries: xz, one file each.

    packbinaries.py BINARIES_DIR CACHE_DIR

BINARIES_DIR holds linux-<arch>/<binary> files (the collection's
binaries/). Writes BINARIES_DIR/SHA256SUMS (sha256sum's format: the sum of
each binary as it will run, by its path under binaries/), then replaces
each binary by <binary>.xz: LZMA2 preset 6, behind the x86 branch filter
for amd64's (which compresses x86 code better; liblzma's arm64 filter is
not in Python's lzma module). The collection tarball is gzip, which leaves
Go binaries at ~30 % of their size; xz leaves them at ~20 % (issue 47: the
collection's size for an air-gapped transfer). The action plugin unpacks
the target architecture's with Python's lzma and checks each against
SHA256SUMS before it copies it (plugins/plugin_utils/runner.py).

Packing is slow (~40 s a daemon): each packed file is kept in CACHE_DIR
under its binary's sha256 and reused by the next build of the same bytes;
the cache keeps those of the last few builds.
The standard library only, as the build machine may have nothing else.
"""

import concurrent.futures
import hashlib
import lzma
import os
import sys


def filters(arch):
    chain = [{"id": lzma.FILTER_LZMA2, "preset": 6}]
    if arch == "linux-amd64":
        chain.insert(0, {"id": lzma.FILTER_X86})
    return chain


def pack(path, arch, digest, cache):
    kept = os.path.join(cache, "%s-%s.xz" % (digest, arch))
    if not os.path.exists(kept):
        with open(path, "rb") as f:
            packed = lzma.compress(f.read(), format=lzma.FORMAT_XZ, check=lzma.CHECK_SHA256, filters=filters(arch))
        tmp = "%s.%d.tmp" % (kept, os.getpid())
        with open(tmp, "wb") as f:
            f.write(packed)
        os.replace(tmp, kept)
    with open(kept, "rb") as src, open(path + ".xz", "wb") as dst:
        dst.write(src.read())
    os.utime(kept)  # used now: prune keeps the most recently used
    os.remove(path)


def prune(cache, keep):
    """Remove all but the keep most recently used packed files of cache:
    each build of another commit packs new bytes, which would otherwise
    pile up (~30 MB a build)."""
    files = [os.path.join(cache, f) for f in os.listdir(cache) if f.endswith(".xz")]
    files.sort(key=os.path.getmtime, reverse=True)
    for f in files[keep:]:
        os.remove(f)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root, cache = sys.argv[1], sys.argv[2]
    os.makedirs(cache, exist_ok=True)
    work = []
    for arch in sorted(os.listdir(root)):
        d = os.path.join(root, arch)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if name.endswith(".xz") or not os.path.isfile(path):
                sys.exit("packbinaries: %s is not a binary to pack" % path)
            h = hashlib.sha256()
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            work.append((path, arch, name, h.hexdigest()))
    if not work:
        sys.exit("packbinaries: no binaries under %s" % root)
    with open(os.path.join(root, "SHA256SUMS"), "w", encoding="utf-8") as f:
        for _, arch, name, digest in work:
            f.write("%s  %s/%s\n" % (digest, arch, name))
    with concurrent.futures.ProcessPoolExecutor() as pool:
        for fut in [pool.submit(pack, path, arch, digest, cache) for path, arch, _, digest in work]:
            fut.result()
    # Those of this build and of a few before it (a demo build packs this
    # machine's alone, the collection every architecture's).
    prune(cache, 4 * len(work))


if __name__ == "__main__":
    main()
