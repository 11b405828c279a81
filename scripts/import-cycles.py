#!/usr/bin/env python3
"""The layering gate for src/. Exit 1 when either check fails.

1. No import cycles between files: a file uses another when its code names a
   path into it.
2. No two top-level folders of src/ import each other (a root file such as
   state.rs or error.rs counts as a folder of its own), so dependencies point
   one way: toward domain/, store/ and the root files.

The module tree is read the way rustc reads it: from lib.rs along `mod x;`
declarations, honouring `#[path = "..."]`. A path counts when it starts with
`crate::`, `self::` or `super::` (chains too), with a child module of the
current module (`card::…` in a mod.rs), or with a name a `use` bound to a
module path (`use crate::studies::pipeline as funnel; funnel::x`). Comments
and string literals are skipped; a `mod` declaration is not a use.

Test code does not count: items under `#[cfg(test)]` (inline `mod tests {…}`
and files declared there, such as `*_tests.rs`). Tests may build their
fixtures from any layer (studies/negatives_tests.rs seeds the demo through
cli/), and nothing in the built crate imports them, so they cannot close a
cycle in the code that ships.

`python3 scripts/import-cycles.py A B` also lists the file edges from
folder A into folder B.
"""
import os, re, sys

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src'))
IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
ROOTS = ('crate', 'self', 'super')


def tokens(text):
    """Identifiers, `::`, punctuation and string literals (kind 's');
    comments, chars, lifetimes and numbers are dropped."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif text.startswith('/*', i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith('/*', i):
                    depth, i = depth + 1, i + 2
                elif text.startswith('*/', i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif (m := re.compile(r'b?r(#*)"').match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j
            out.append(('s', text[m.end():j]))
            i = j + len(end)
        elif c == '"' or (c == 'b' and text.startswith('b"', i)):
            j = i + (2 if c == 'b' else 1)
            start = j
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            out.append(('s', text[start:j]))
            i = j + 1
        elif c == "'":
            if text.startswith('\\', i + 1):
                j = text.find("'", i + 3)
                i = n if j < 0 else j + 1
            elif i + 2 < n and text[i + 2] == "'":
                i += 3
            else:  # a lifetime or label
                m = IDENT.match(text, i + 1)
                i = m.end() if m else i + 1
        elif m := IDENT.match(text, i):
            out.append(('i', m.group()))
            i = m.end()
        elif c.isdigit():
            m = re.compile(r'[0-9][0-9A-Za-z_.]*').match(text, i)
            i = m.end()
        elif text.startswith('::', i):
            out.append(('p', '::'))
            i += 2
        else:
            out.append(('p', c))
            i += 1
    return out


def items(toks):
    """Marks the tokens of each inline module and each `#[cfg(test)]` item:
    yields (index, inline module stack, in_test) for every token, and the
    out-of-line `mod x;` declarations as ('decl', name, path_attr, in_test,
    inline stack)."""
    marks, decls = [], []
    stack = []  # (kind, depth at open, name) for inline mods and test items
    depth, i, attrs = 0, 0, []
    while i < len(toks):
        kind, v = toks[i]
        if v == '#' and i + 1 < len(toks) and toks[i + 1][1] in ('[', '!'):
            j = i + 1 + (toks[i + 1][1] == '!')
            d, k = 0, j
            while k < len(toks):
                d += toks[k][1] == '['
                d -= toks[k][1] == ']'
                if d == 0:
                    break
                k += 1
            attrs.append(toks[j + 1:k])
            for t in range(i, k + 1):
                marks.append((t, tuple(s[2] for s in stack if s[0] == 'mod'), any(s[0] == 'test' for s in stack)))
            i = k + 1
            continue
        test_attr = any([t[1] for t in a] == ['cfg', '(', 'test', ')'] for a in attrs)
        path_attr = next((a[2][1] for a in attrs if len(a) >= 3 and a[0][1] == 'path' and a[2][0] == 's'), None)
        if attrs and v not in ('pub', 'crate', '(', ')', 'in', 'super', 'self'):
            if test_attr:
                stack.append(('test', depth, None))
            if v == 'mod' and i + 2 < len(toks) and toks[i + 1][0] == 'i':
                name, after = toks[i + 1][1], toks[i + 2][1]
                in_test = any(s[0] == 'test' for s in stack)
                if after == ';':
                    decls.append((name, path_attr, in_test, tuple(s[2] for s in stack if s[0] == 'mod')))
            attrs = []
        elif v == 'mod' and i + 2 < len(toks) and toks[i + 1][0] == 'i' and toks[i + 2][1] == ';':
            decls.append((toks[i + 1][1], None, any(s[0] == 'test' for s in stack), tuple(s[2] for s in stack if s[0] == 'mod')))
        if v == 'mod' and i + 2 < len(toks) and toks[i + 1][0] == 'i' and toks[i + 2][1] == '{':
            stack.append(('mod', depth + 1, toks[i + 1][1]))
        marks.append((i, tuple(s[2] for s in stack if s[0] == 'mod'), any(s[0] == 'test' for s in stack)))
        if v in ('{', '(', '['):
            depth += 1
        elif v in ('}', ')', ']'):
            depth -= 1
            while stack and ((stack[-1][0] == 'mod' and depth < stack[-1][1]) or (stack[-1][0] == 'test' and depth <= stack[-1][1] and v == '}')):
                stack.pop()
        elif v == ';':
            while stack and stack[-1][0] == 'test' and depth == stack[-1][1]:
                stack.pop()
        i += 1
    marks.sort()
    return [(m[1], m[2]) for m in marks], decls


# module path -> (file, is_test); read from lib.rs along the declarations
modules, parsed, queue = {}, {}, [((), os.path.join(SRC, 'lib.rs'), True, False)]
while queue:
    mod, path, mod_rs, is_test = queue.pop()
    if not os.path.exists(path) or mod in modules:
        continue
    modules[mod] = (os.path.relpath(path, SRC), is_test)
    toks = tokens(open(path, encoding='utf-8').read())
    marks, decls = items(toks)
    parsed[mod] = (toks, marks)
    here = os.path.dirname(path)
    for name, path_attr, in_test, inline in decls:
        child = mod + inline + (name,)
        if path_attr is not None and not inline:
            queue.append((child, os.path.join(here, path_attr), False, is_test or in_test))
            continue
        base = here if mod_rs else os.path.join(here, os.path.basename(path)[:-3])
        base = os.path.join(base, *inline)
        flat, nested = os.path.join(base, name + '.rs'), os.path.join(base, name, 'mod.rs')
        queue.append((child, flat, False, is_test or in_test) if os.path.exists(flat) else (child, nested, True, is_test or in_test))

inline_mods = set()
for mod, (toks, marks) in parsed.items():
    for stack, _ in marks:
        for k in range(1, len(stack) + 1):
            inline_mods.add(mod + stack[:k])


def known(path):
    return path in modules or path in inline_mods


def file_of(path):
    """The file holding the longest known module prefix of `path`."""
    for n in range(len(path), -1, -1):
        p = tuple(path[:n])
        if p in modules:
            return p
    return None


def use_tree(toks, i):
    """Parses a use tree or path at toks[i]; returns (leaves, next index), a
    leaf being (segments, alias)."""
    segs = []
    while i < len(toks):
        kind, v = toks[i]
        if v == '{':
            leaves, i = [], i + 1
            while i < len(toks) and toks[i][1] != '}':
                sub, i = use_tree(toks, i)
                leaves += [(segs + s, a) for s, a in sub]
                if i < len(toks) and toks[i][1] == ',':
                    i += 1
            return leaves or [(segs, None)], i + 1
        if v == '*':
            return [(segs, '_')], i + 1
        if kind != 'i':
            break
        segs.append(v)
        i += 1
        if i + 1 < len(toks) and toks[i][1] == '::' and toks[i + 1][1] != '<':
            i += 1
            continue
        break
    alias = None
    if i + 1 < len(toks) and toks[i][1] == 'as' and toks[i + 1][0] == 'i':
        alias, i = toks[i + 1][1], i + 2
    return [(segs, alias)], i


def absolute(segs, here, bound):
    """The module path a path names, or None when it leaves the crate."""
    head, rest = segs[0], list(segs[1:])
    if head == 'crate':
        base = []
    elif head in ('self', 'super'):
        base = list(here)
        if head == 'super':
            base = base[:-1]
        while rest and rest[0] == 'super':
            base, rest = base[:-1], rest[1:]
        if rest and rest[0] == 'self':
            rest = rest[1:]
    elif head in bound:
        base = list(bound[head])
    elif known(tuple(here) + (head,)):
        base = list(here) + [head]
    else:
        return None
    return tuple(base + [s for s in rest if s != 'self'])


edges = {m: {} for m in modules}  # file module -> {file module: only from test code}
for mod, (toks, marks) in parsed.items():
    bound = {}
    for uses in (True, False):  # the `use` bindings first, then every path
        for i, (kind, v) in enumerate(toks):
            if kind != 'i' or i + 1 >= len(toks) or toks[i + 1][1] != '::':
                continue
            prev = toks[i - 1][1] if i else ''
            if prev in ('::', '$', '.') or (prev == 'use') != uses:
                continue
            here = mod + marks[i][0]
            for segs, alias in use_tree(toks, i)[0]:
                target = absolute(segs, here, bound)
                if target is None:
                    continue
                if uses and alias != '_':
                    name = alias or (segs[-1] if segs[-1] != 'self' else segs[-2] if len(segs) > 1 else None)
                    if name:
                        bound[name] = target
                f = file_of(target)
                if f is not None and f != mod:
                    edges[mod][f] = edges[mod].get(f, True) and (marks[i][1] or modules[mod][1])

# A child using its parent (`super::…`) is how a module shares its types with
# its parts; only the parent reaching into a child counts.
shipped = {m: {t for t, test in ts.items() if not test and t != m[:len(t)]} for m, ts in edges.items() if not modules[m][1]}


# File edges let through for now, each with its reason. One that no longer
# matches is reported, so it is removed once its reason is gone.
ALLOWED = {}
file_of_mod = {m: modules[m][0].replace(os.sep, '/') for m in modules}
for m, ts in shipped.items():
    for t in list(ts):
        if (file_of_mod[m], file_of_mod[t]) in ALLOWED:
            ts.discard(t)
            ALLOWED[(file_of_mod[m], file_of_mod[t])] = None
for (a, b), why in ALLOWED.items():
    if why is not None:
        print(f'note: the allowance {a} -> {b} matches nothing; remove it from scripts/import-cycles.py')


def folder(m):
    return m[0] + ('/' if modules[m][0].count(os.sep) else '.rs')


if len(sys.argv) == 3:
    a, b = (x.rstrip('/').removesuffix('.rs') for x in sys.argv[1:])
    for m, ts in sorted(shipped.items()):
        for t in sorted(ts):
            if m and t and m[0] == a and t[0] == b:
                print(modules[m][0], '->', modules[t][0])
    sys.exit(0)

# 1. file cycles (Tarjan)
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)


def strong(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in shipped[v]:
        if w not in index:
            strong(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(comp)


for v in shipped:
    if v not in index:
        strong(v)
for c in sccs:
    print('cycle:', ' <-> '.join(modules[m][0] for m in sorted(c)))

# 2. folders importing each other (lib.rs, the crate root, declares them all)
between = {}
for m, ts in shipped.items():
    for t in ts:
        if m and t and m[0] != t[0]:
            between.setdefault((folder(m), folder(t)), []).append((modules[m][0], modules[t][0]))
pairs = sorted((a, b) for a, b in between if a < b and (b, a) in between)
for a, b in pairs:
    print(f'folders import each other: {a} <-> {b}')
    for x, y in sorted(between[(a, b)] + between[(b, a)]):
        print(f'    {x} -> {y}')
sys.exit(1 if sccs or pairs else 0)
