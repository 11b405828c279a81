#!/usr/bin/env python3
"""Lists import cycles between the files of src/ (a file uses another when it
names a path into it: `crate::a::b`, `super::x`, `self::x`). Exit 1 on a cycle."""
import os, re, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src')
files = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p = os.path.relpath(os.path.join(d, f), root)
            mod = p[:-3].split(os.sep)
            if mod[-1] in ('mod', 'lib', 'main'):
                mod = mod[:-1]
            files[tuple(mod)] = p

def resolve(path):
    """The longest module prefix of `path` that is a file."""
    for n in range(len(path), -1, -1):
        if tuple(path[:n]) in files:
            return tuple(path[:n])
    return None

edges = {m: set() for m in files}
for mod, p in files.items():
    src = open(os.path.join(root, p)).read()
    # test modules may use their parent freely
    src = re.split(r'#\[cfg\(test\)\]\s*mod tests\s*\{', src)[0]
    is_dir = p.endswith(('mod.rs', 'lib.rs'))
    here = list(mod) if is_dir else list(mod[:-1])
    for m in re.finditer(r'\b(crate|super|self)((?:::[a-z_][a-z0-9_]*)*)(?:::\{([^}]*)\})?', src):
        parts = m.group(2).split('::')[1:]
        if m.group(1) == 'crate':
            base = []
        elif m.group(1) == 'self':
            base = list(mod)
        else:
            base = here[:-1] if is_dir else here
        heads = [h.strip().split(' as ')[0] for h in (m.group(3) or '').split(',') if h.strip()]
        for tail in [h.split('::') for h in heads if h != 'self'] or [[]]:
            target = resolve(base + parts + [t for t in tail if re.match(r'^[a-z_][a-z0-9_]*$', t)])
            if target is not None and target != mod:
                edges[mod].add(target)
# parent modules (mod.rs) declaring children are not uses
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def strong(v):
    index[v] = low[v] = counter[0]; counter[0] += 1; stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: sccs.append(comp)
for v in edges:
    if v not in index: strong(v)
for c in sccs:
    print('cycle:', ' <-> '.join(files[m] for m in sorted(c)))
sys.exit(1 if sccs else 0)
