#!/usr/bin/env python3
"""What a browser downloads per page group of the split WASM (.ci/build-site.sh):
the shell (berth.wasm) plus the group's module and every module it needs,
each file compressed on its own, as a server sends them.
Usage: wasm_sizes.py SITE_PKG_DIR"""
import os
import subprocess
import sys

from wasm_split import modules, splits

pkg = sys.argv[1]
sizes = {}


def size(file):
    """(raw, brotli -q 11) bytes of one file."""
    if file not in sizes:
        path = os.path.join(pkg, file)
        packed = subprocess.run(["brotli", "-q", "11", "-c", path], capture_output=True, check=True).stdout
        sizes[file] = (os.path.getsize(path), len(packed))
    return sizes[file]


def kb(n):
    return f"{n / 1024:.0f} KB"


shell_raw, shell_br = size("berth.wasm")
print(f"shell berth.wasm: raw {kb(shell_raw)}, brotli {kb(shell_br)}")
for js in ("berth.js", "__wasm_split.js"):
    print(f"{js}: raw {kb(size(js)[0])}, brotli {kb(size(js)[1])}")
worst = 0
for group, files in sorted(splits(modules(pkg)).items()):
    raw = sum(size(f)[0] for f in files)
    br = sum(size(f)[1] for f in files)
    worst = max(worst, shell_br + br)
    name = group.rsplit("_", 1)[0]
    print(f"group {name:<9} {len(files):3d} files, raw {kb(raw):>7}, brotli {kb(br):>6}; a page of it loads {kb(shell_br + br)} brotli")
every = [f for f in os.listdir(pkg) if f.endswith(".wasm")]
print(f"all {len(every)} WASM files: raw {kb(sum(size(f)[0] for f in every))}, brotli {kb(sum(size(f)[1] for f in every))}")
print(f"largest page load: {kb(worst)} brotli (target <= 250 KB)")
