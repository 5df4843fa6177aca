"""Import circles between a crate's files, for the lints of `make test`.

Each `crate::`, `super::` and `self::` path (in `use` lines and inline) is
resolved to the deepest file module it names; a re-export `pub use
sub::Item` in a mod.rs resolves to sub's file, the one that defines it.
Declaring a module (`mod x;`) is not an import; `#[cfg(test)]` modules are
skipped, inline or in a file of their own (`#[cfg(test)] mod tests;`). Prints the circles (groups of files that reach each other) and,
where a root names its layers, the imports that point up; exits 1 if there
is either. Its own tests: .ci/test_import_circles.py.

Usage: python3 .ci/import_circles.py app/src:pages,rpc,backend,rules,model server/src
"""
import os, re, sys


def without_test_modules(text):
    """The text without `#[cfg(test)] mod x { ... }` blocks: a test module's
    `super::` is the file itself, and tests may import what they like."""
    out, i = [], 0
    for m in re.finditer(r'#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{', text):
        if m.start() < i:
            continue
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {'{': 1, '}': -1}.get(text[j], 0)
            j += 1
        out.append(text[i:m.start()])
        i = j
    out.append(text[i:])
    return ''.join(out)


def graph(root):
    """The crate's files (module path -> file) and who imports whom."""
    files = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith('.rs'):
                p = os.path.join(d, f)
                rel = os.path.relpath(p, root)[:-3].split(os.sep)
                if rel[-1] in ('mod', 'lib', 'main'):
                    rel = rel[:-1]
                files[tuple(rel)] = p
    src = {m: open(p).read() for m, p in files.items()}
    # Test modules in files of their own: tests may import what they like.
    for m, s in list(src.items()):
        for name in re.findall(r'#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', s):
            files.pop(m + (name,), None)
            src.pop(m + (name,), None)
    for m in src:
        src[m] = without_test_modules(re.sub(r'//[^\n]*', '', src[m]))
    reexp = {}
    for m, s in src.items():
        for sub, items in re.findall(r'pub use (?:self::)?([a-z_]+)::\{?([^;]*?)\}?;', s):
            for it in re.split(r'[,\s]+', items):
                it = it.strip()
                if it and it != 'self' and '::' not in it:
                    reexp[(m, it.split(' as ')[-1])] = m + (sub,)
    def resolve(segs):
        best = None
        for i in range(len(segs), -1, -1):
            if tuple(segs[:i]) in files:
                best = tuple(segs[:i]); rest = segs[i:]; break
        if best is None: return None
        if rest and (best, rest[0]) in reexp and reexp[(best, rest[0])] in files:
            return reexp[(best, rest[0])]
        return best
    def expand_use(body):
        # expand `a::{b, c::{d}}` into flat paths (one level deep enough)
        out = []
        def rec(prefix, text):
            text = text.strip()
            m = re.match(r'^([\w:]*?)::\{(.*)\}$', text, re.S)
            if m:
                pre = prefix + [x for x in m.group(1).split('::') if x]
                depth, cur, parts = 0, '', []
                for ch in m.group(2):
                    if ch == '{': depth += 1
                    if ch == '}': depth -= 1
                    if ch == ',' and depth == 0: parts.append(cur); cur = ''
                    else: cur += ch
                parts.append(cur)
                for p in parts:
                    if p.strip(): rec(pre, p)
            else:
                out.append(prefix + [x for x in text.split(' as ')[0].split('::') if x])
        rec([], body)
        return out
    edges = {m: set() for m in files}
    for m, s in src.items():
        paths = []
        for body in re.findall(r'\buse\s+([^;]+);', s):
            paths += expand_use(body)
        paths += [p.split('::') for p in re.findall(r'\b(crate(?:::\w+)+)', s)]
        paths += [p.split('::') for p in re.findall(r'\b((?:super::)+\w+(?:::\w+)*)', s)]
        for p in paths:
            if not p: continue
            # The file's own module path: `self::` is it, `super::` its
            # parent, for mod.rs and a plain x.rs alike.
            base = list(m)
            if p[0] == 'crate': segs = p[1:]
            elif p[0] == 'super':
                b = base[:]
                while p and p[0] == 'super': b = b[:-1]; p = p[1:]
                segs = b + p
            elif p[0] == 'self': segs = base + p[1:]
            else: continue
            t = resolve(segs)
            if t is not None and t != m and t != ():
                edges[m].add(t)
    return files, edges


def circles(edges):
    """Groups of files that reach each other (Tarjan's strongly connected components)."""
    index, low, stack, on, sccs, i = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def sc(v):
        index[v] = low[v] = i[0]; i[0] += 1; stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index: sc(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: sccs.append(comp)
    for v in edges:
        if v not in index: sc(v)
    return [sorted(c) for c in sccs]


def upward(edges, layers):
    """Imports from a file of a lower layer into a higher one. `layers` lists
    top-level modules from the top down (`pages,rpc,backend,rules,model`):
    each may import those after it, never those before it."""
    rank = {name: i for i, name in enumerate(layers)}
    found = []
    for m, targets in edges.items():
        for t in targets:
            if m and t and m[0] in rank and t[0] in rank and rank[t[0]] < rank[m[0]]:
                found.append((m, t))
    return sorted(found)


def check(root, layers=()):
    files, edges = graph(root)
    found = circles(edges)
    up = upward(edges, layers) if layers else []
    print(f"{root}: {len(files)} files, {sum(len(e) for e in edges.values())} imports, "
          f"{len(found)} circle(s), {len(up)} upward import(s)" + (f" ({' → '.join(layers)})" if layers else ""))
    for c in found:
        print(f"  circle of {len(c)} files:", ', '.join('/'.join(x) for x in c))
    for m, t in up:
        print(f"  upward: {'/'.join(m)} imports {'/'.join(t)}")
    return len(found) + len(up)


if __name__ == '__main__':
    # ROOT or ROOT:LAYER,LAYER,… (top layer first)
    problems = 0
    for arg in sys.argv[1:]:
        root, _, layers = arg.partition(':')
        problems += check(root, [l for l in layers.split(',') if l])
    sys.exit(1 if problems else 0)
