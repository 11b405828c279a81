#!/usr/bin/env python3
"""The layering gate for src/. Exit 1 when a check fails.

1. No import cycles between files: a file uses another when its code names a
   path into it.
2. Layers, one way (README): each top-level entry of src/ (a folder, or a
   root file such as state.rs) has its place in `LAYERS`, and a file may use
   only its own entry and the entries of lower tiers: not a peer in its own
   tier, nothing above. An entry in `ONLY` may use just the entries named
   there. An entry of src/ that `LAYERS` does not place fails the gate, so a
   new folder is placed (here and in the README) before it ships.
3. No two top-level entries import each other (implied by 2; printed apart
   because it is the worst case).

Every .rs file under src/ (main.rs, the binary, aside) is a module, placed by
its path: the tree is read the way rustc reads it, from lib.rs along
`mod x;` declarations and `#[path = "..."]`, and then every file that no
plain declaration reaches (a kind's folder is declared inside
`register_kinds!`, which no token scan can expand) is placed where its path
puts it (`kinds/ranking/server.rs` is `crate::kinds::ranking::server`) and
read on from there. A path counts when it starts with `crate::`, `self::` or
`super::` (chains too), with a child module of the current module
(`card::…` in a mod.rs), or with a name a `use` bound to a module path
(`use crate::studies::pipeline as funnel; funnel::x`). Comments and string
literals are skipped; a `mod` declaration is not a use.

Test code does not count: items under `#[cfg(test)]` (inline `mod tests {…}`
and files declared there, such as `*_tests.rs`). Tests may build their
fixtures from any layer (studies/negatives_tests.rs seeds the demo through
cli/), and nothing in the built crate imports them, so they cannot close a
cycle in the code that ships.

`python3 scripts/import-cycles.py A B` lists the file edges from entry A
into entry B; `--self-test` checks the gate itself on copies of src/ with a
wrong-way import planted (run by scripts/test.sh); `--graph` prints the
import graph by entry, with file-edge counts; `--src DIR` reads another
tree.
"""
import os, re, shutil, sys, tempfile

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src'))
IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
RAW = re.compile(r'b?r(#*)"')
NUMBER = re.compile(r'[0-9][0-9A-Za-z_.]*')
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
        elif (m := RAW.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
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
            m = NUMBER.match(text, i)
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



# The layers, top to bottom (README, "Layers, one way"). A file may use its
# own entry and any entry of a lower tier; peers in one tier do not use each
# other.
LAYERS = [
    ('cli',),
    ('http',),
    ('ui',),
    # Prolific's side of a study (a feature service) builds on crowd's links.
    ('prolific',),
    ('crowd', 'datasets', 'models'),
    ('kinds',),
    ('ui_kit',),
    ('studies',),
    ('accounts',),
    ('state.rs', 'error.rs'),
    ('login_limits.rs',),
    ('scoring',),
    ('store',),
    # Plain data: the wire's JSON shapes and the generated demo dataset.
    ('api_types.rs', 'demo'),
    ('domain',),
]
# Entries that may use only the lower entries named here.
ONLY = {'scoring': ('store', 'domain')}
TIER = {name: n for n, tier in enumerate(LAYERS) for name in tier}

# File edges let through for now, each with its reason (`(from, to): why`,
# paths relative to src/). One that no longer matches is reported, so it is
# removed once its reason is gone.
ALLOWED = {}


def rust_files(src):
    """Every .rs file under src, relative, but the binary's main.rs."""
    out = []
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), src)
            if f.endswith('.rs') and rel != 'main.rs' and rel.split(os.sep)[0] != 'bin':
                out.append(rel)
    # Shallow first and mod.rs first in its folder: a folder's own
    # declarations (and so its files' `#[path]` and `#[cfg(test)]`) are read
    # before its files are placed by path.
    return sorted(out, key=lambda r: (r.count(os.sep), os.path.basename(r) != 'mod.rs', r))


def by_path(rel):
    """The module a file is by its path alone."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] == 'mod':
        parts = parts[:-1]
    return tuple(parts) if parts != ['lib'] else ()


SCANNED = {}


def scan(text):
    """A file's tokens, marks and declarations; the self-test's copies of the
    tree read the same texts again."""
    if text not in SCANNED:
        toks = tokens(text)
        SCANNED[text] = (toks,) + items(toks)
    return SCANNED[text]


def read_tree(src):
    """module path -> (file relative to src, is_test), and each module's
    (tokens, marks)."""
    modules, parsed = {}, {}

    def walk(queue):
        while queue:
            mod, path, mod_rs, is_test = queue.pop()
            if not os.path.exists(path) or mod in modules:
                continue
            modules[mod] = (os.path.relpath(path, src), is_test)
            toks, marks, decls = scan(open(path, encoding='utf-8').read())
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

    walk([((), os.path.join(src, 'lib.rs'), True, False)])
    for rel in rust_files(src):
        if rel not in {f for f, _ in modules.values()}:
            walk([(by_path(rel), os.path.join(src, rel), os.path.basename(rel) in ('mod.rs', 'lib.rs'), False)])
    return modules, parsed


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


def absolute(segs, here, bound, known):
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


def graph(src):
    """The modules and the file edges of the code that ships."""
    modules, parsed = read_tree(src)
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
            if tuple(path[:n]) in modules:
                return tuple(path[:n])
        return None

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
                    target = absolute(segs, here, bound, known)
                    if target is None:
                        continue
                    if uses and alias != '_':
                        name = alias or (segs[-1] if segs[-1] != 'self' else segs[-2] if len(segs) > 1 else None)
                        if name:
                            bound[name] = target
                    f = file_of(target)
                    if f is not None and f != mod:
                        edges[mod][f] = edges[mod].get(f, True) and (marks[i][1] or modules[mod][1])

    # A child using its parent (`super::…`) is how a module shares its types
    # with its parts; only the parent reaching into a child counts.
    shipped = {m: {t for t, test in ts.items() if not test and t != m[:len(t)]} for m, ts in edges.items() if not modules[m][1]}
    return modules, shipped


def entry(modules, m):
    """The top-level entry of src/ a module's file is in: `kinds`, `state.rs`."""
    return modules[m][0].split(os.sep)[0]


def shown(e):
    return e if e.endswith('.rs') else e + '/'


def check(src):
    """The gate's findings on the tree at `src`, as lines; none when it passes."""
    modules, shipped = graph(src)
    out = []
    files = {m: modules[m][0].replace(os.sep, '/') for m in modules}
    allowed = dict(ALLOWED)
    for m, ts in shipped.items():
        for t in list(ts):
            if (files[m], files[t]) in allowed:
                ts.discard(t)
                allowed[(files[m], files[t])] = None
    for (a, b), why in allowed.items():
        if why is not None:
            print(f'note: the allowance {a} -> {b} matches nothing; remove it from scripts/import-cycles.py')
    missing = sorted(set(rust_files(src)) - {f for f, _ in modules.values()})
    for rel in missing:
        out.append(f'not read: {rel}')

    # 1. file cycles (Tarjan)
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

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
        out.append('cycle: ' + ' <-> '.join(files[m] for m in sorted(c)))

    # 2. the layer order, and 3. entries importing each other
    entries = {entry(modules, m) for m in modules if m}
    for e in sorted(entries - set(TIER)):
        out.append(f'not placed: src/{shown(e)} has no place in LAYERS (scripts/import-cycles.py) nor in the README\'s layer order')
    between = {}
    for m, ts in shipped.items():
        for t in ts:
            a, b = entry(modules, m) if m else None, entry(modules, t) if t else None
            if a and b and a != b:
                between.setdefault((a, b), []).append((files[m], files[t]))
    for (a, b), uses in sorted(between.items()):
        if a not in TIER or b not in TIER:
            continue
        if a in ONLY:
            ok = b in ONLY[a]
            may = ', '.join(shown(x) for x in ONLY[a])
        else:
            ok = TIER[b] > TIER[a]
            may = 'its own folder and the layers below it'
        if not ok:
            for x, y in sorted(uses):
                out.append(f'wrong way: {x} -> {y} ({shown(a)} may use only {may}; README, "Layers, one way")')
    for a, b in sorted((a, b) for a, b in between if a < b and (b, a) in between):
        out.append(f'folders import each other: {shown(a)} <-> {shown(b)}')
        for x, y in sorted(between[(a, b)] + between[(b, a)]):
            out.append(f'    {x} -> {y}')
    return out


def planted(src, rel, line, where='top'):
    """The gate's findings on a copy of `src` with `line` added to file `rel`
    (at its top, or inside a new `#[cfg(test)]` module)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, 'src')
        shutil.copytree(src, copy)
        path = os.path.join(copy, rel)
        text = open(path, encoding='utf-8').read()
        if where == 'top':
            # After the file's inner doc comment and attributes, if any.
            lines = text.split('\n')
            at = 0
            while at < len(lines) and (lines[at].startswith('//!') or lines[at].startswith('#![')):
                at += 1
            text = '\n'.join(lines[:at] + [line] + lines[at:])
        else:
            text += f'\n#[cfg(test)]\nmod planted_tests {{\n    {line}\n}}\n'
        open(path, 'w', encoding='utf-8').write(text)
        return check(copy)


def self_test(src):
    """The gate sees today's tree pass, sees every file, and fails on each
    planted wrong-way import; exits 1 when it does not."""
    failures = []

    def expect(name, found, want):
        hits = [f for f in found if want(f)]
        if not hits:
            failures.append(f'{name}: expected a finding, got {found or "none"}')
        else:
            print(f'ok: {name}: {hits[0]}')

    found = check(src)
    if found:
        failures.append('today\'s tree: expected a pass, got ' + '; '.join(found))
    else:
        print('ok: today\'s tree passes')
    modules, _ = read_tree(src)
    files = {f.replace(os.sep, '/') for f, _ in modules.values()}
    want = {f.replace(os.sep, '/') for f in rust_files(src)}
    if files != want:
        failures.append(f'files not read: {sorted(want - files)}')
    elif 'kinds/ranking/server.rs' not in files:
        failures.append('kinds/ranking/server.rs is not read')
    else:
        print(f'ok: all {len(files)} files are read, kind folders included')
    cases = [
        # The case: a kind folder (declared in register_kinds!) using
        # http, which uses kinds: a two-way tie.
        ('a kind using http', 'kinds/ranking/server.rs', 'use crate::http::extract::Caller;',
         lambda f: f.startswith('wrong way: kinds/ranking/server.rs -> http/extract.rs')),
        ('the folders that then import each other', 'kinds/ranking/server.rs', 'use crate::http::extract::Caller;',
         lambda f: f == 'folders import each other: http/ <-> kinds/'),
        # One way only, and still wrong: nothing imports the other way.
        ('demo using store', 'demo/mod.rs', 'use crate::store::db;',
         lambda f: f.startswith('wrong way: demo/mod.rs -> store/db.rs')),
        ('a peer feature service', 'models/human.rs', 'use crate::crowd::kept;',
         lambda f: f.startswith('wrong way: models/human.rs -> crowd/kept.rs')),
        ('scoring using more than store and domain', 'scoring/mod.rs', 'use crate::state::AppState;',
         lambda f: f.startswith('wrong way: scoring/mod.rs -> state.rs')),
        # The services are handed the kinds' table; naming it is going up.
        ('study creation reaching for the registry', 'studies/create.rs', 'use crate::kinds::REGISTRY;',
         lambda f: f.startswith('wrong way: studies/create.rs -> kinds/mod.rs')),
    ]
    for name, rel, line, want in cases:
        expect(name, planted(src, rel, line), want)
    test_only = planted(src, 'kinds/ranking/server.rs', 'use crate::http::extract::Caller;', where='test')
    if test_only:
        failures.append('test code counted: ' + '; '.join(test_only))
    else:
        print('ok: the same import in test code passes')
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, 'src')
        shutil.copytree(src, copy)
        os.mkdir(os.path.join(copy, 'newroom'))
        open(os.path.join(copy, 'newroom', 'mod.rs'), 'w').write('use crate::domain::ids::StudyId;\n')
        expect('a folder with no place', check(copy), lambda f: f.startswith('not placed: src/newroom/'))
    for f in failures:
        print('FAILED:', f)
    return 1 if failures else 0


def print_graph(src):
    """The import graph by top-level entry: `A -> B  n` for the n file
    edges from A's files into B's (the drawing the README's order is
    checked against), then each entry's file count."""
    modules, shipped = graph(src)
    edges, files = {}, {}
    for m, (f, _) in modules.items():
        files[entry(modules, m)] = files.get(entry(modules, m), 0) + 1
    for m, ts in shipped.items():
        for t in ts:
            if m and t:
                a, b = entry(modules, m), entry(modules, t)
                if a != b:
                    edges[(a, b)] = edges.get((a, b), 0) + 1
    for (a, b), n in sorted(edges.items(), key=lambda e: (TIER.get(e[0][0], -1), e[0])):
        print(f'{a} -> {b}  {n}')
    print('files:', ', '.join(f'{e} {n}' for e, n in sorted(files.items(), key=lambda e: (TIER.get(e[0], -1), e[0]))))
    return 0


def main(argv):
    src = SRC
    if '--src' in argv:
        at = argv.index('--src')
        src, argv = os.path.abspath(argv[at + 1]), argv[:at] + argv[at + 2:]
    if argv == ['--self-test']:
        return self_test(src)
    if argv == ['--graph']:
        return print_graph(src)
    if len(argv) == 2:
        a, b = (x.rstrip('/') for x in argv)
        modules, shipped = graph(src)
        for m, ts in sorted(shipped.items()):
            for t in sorted(ts):
                if m and t and entry(modules, m).removesuffix('.rs') == a.removesuffix('.rs') and entry(modules, t).removesuffix('.rs') == b.removesuffix('.rs'):
                    print(modules[m][0], '->', modules[t][0])
        return 0
    found = check(src)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == '__main__':
    sys.setrecursionlimit(10000)
    sys.exit(main(sys.argv[1:]))
