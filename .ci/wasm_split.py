"""Reads the loader wasm-split-cli writes (__wasm_split.js): every loadable
module of the split WASM with the modules it loads first."""
import os
import re

# const __chunk_3 = makeLoad(() => { const src = fetch(new URL("./chunk_3.wasm", ...)); ... }, [__chunk_1, ...]);
MODULE = re.compile(
    r'const (__\w+) = (?:wrapAsyncCb\()?makeLoad\(\(\) => \{\s*'
    r'const src = fetch\(new URL\("\./([\w.]+)", import\.meta\.url\)\);.*?\n\}\n, \[([^\]]*)\]',
    re.S,
)
SPLIT = "__wasm_split_load_"


def modules(pkg):
    """{loader name: (file, [loader names it needs first])}"""
    loader = open(os.path.join(pkg, "__wasm_split.js"), encoding="utf-8").read()
    found = {
        name: (file, [d.strip() for d in deps.split(",") if d.strip()])
        for name, file, deps in MODULE.findall(loader)
    }
    if not found:
        raise SystemExit("no modules found in __wasm_split.js: has wasm-split-cli's output format changed?")
    return found


def splits(found):
    """{split name, as Leptos' #[lazy] names it: [files it needs, itself included]}"""
    def needs(name):
        seen, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(found[current][1])
        return sorted(found[n][0] for n in seen)

    return {name[len(SPLIT):]: needs(name) for name in found if name.startswith(SPLIT)}
