#!/usr/bin/env python3
"""What a browser downloads per page group of the split WASM (.ci/build-site.sh).

Reads the loader wasm-split-cli writes (__wasm_split.js): every loadable
module with the modules it needs first. A page's WASM is the shell
(berth.wasm) plus its group's module and everything that module needs, each
file compressed on its own, as a server sends them.
Usage: wasm_sizes.py SITE_PKG_DIR
"""
import os
import re
import subprocess
import sys

pkg = sys.argv[1]
loader = open(os.path.join(pkg, "__wasm_split.js"), encoding="utf-8").read()
# const __chunk_3 = makeLoad(() => { const src = fetch(new URL("./chunk_3.wasm", ...)); ... }, [__chunk_1, ...]);
module = re.compile(
    r'const (__\w+) = (?:wrapAsyncCb\()?makeLoad\(\(\) => \{\s*'
    r'const src = fetch\(new URL\("\./([\w.]+)", import\.meta\.url\)\);.*?\n\}\n, \[([^\]]*)\]',
    re.S,
)
modules = {
    name: (file, [d.strip() for d in deps.split(",") if d.strip()])
    for name, file, deps in module.findall(loader)
}
if not modules:
    sys.exit("no modules found in __wasm_split.js: has wasm-split-cli's output format changed?")

sizes = {}


def size(file):
    """(raw, brotli -q 11) bytes of one file."""
    if file not in sizes:
        path = os.path.join(pkg, file)
        packed = subprocess.run(["brotli", "-q", "11", "-c", path], capture_output=True, check=True).stdout
        sizes[file] = (os.path.getsize(path), len(packed))
    return sizes[file]


def needs(name):
    """The module and every module it loads first."""
    seen, todo = set(), [name]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(modules[current][1])
    return [modules[n][0] for n in seen]


kb = lambda n: f"{n / 1024:.0f} KB"
shell_raw, shell_br = size("berth.wasm")
print(f"shell berth.wasm: raw {kb(shell_raw)}, brotli {kb(shell_br)}")
for js in ("berth.js", "__wasm_split.js"):
    print(f"{js}: raw {kb(size(js)[0])}, brotli {kb(size(js)[1])}")
worst = 0
for name in sorted(n for n in modules if n.startswith("__wasm_split_load_")):
    files = needs(name)
    raw = sum(size(f)[0] for f in files)
    br = sum(size(f)[1] for f in files)
    worst = max(worst, shell_br + br)
    group = re.sub(r"^__wasm_split_load___|_\d+$", "", name)
    print(f"group {group:<14} {len(files):3d} files, raw {kb(raw):>7}, brotli {kb(br):>6}; a page of it loads {kb(shell_br + br)} brotli")
every = [f for f in os.listdir(pkg) if f.endswith(".wasm")]
print(f"all {len(every)} WASM files: raw {kb(sum(size(f)[0] for f in every))}, brotli {kb(sum(size(f)[1] for f in every))}")
print(f"largest page load: {kb(worst)} brotli (target <= 250 KB)")
