#!/usr/bin/env python3
"""Which of the program's SQL statements PostgreSQL accepts (issue 36's port).

Usage: scripts/pg-sql-check.py POSTGRES_URL [--list-failing] [--max-failing N]

Finds every string literal under src/ that starts like a statement (SELECT,
INSERT, UPDATE, DELETE, WITH), skips SQLite's text of a statement written
for each backend (the `sqlite:` field of a `store::dialect::Sql`; its
`postgres:` text must be a whole literal statement, so that it is checked,
or the check fails), skips those built with format! (they hold
`{}`), by concat! (unbalanced parentheses) or by a QueryBuilder, and unit
tests' own tables, and asks PostgreSQL to PREPARE each in a scratch
database it makes on the server at POSTGRES_URL from migrations/postgres
(and drops after). PREPARE parses and plans without running, so nothing is
written. Prints a line per failing
statement (file:line and PostgreSQL's error) with --list-failing, and a
count at the end. With --max-failing N it exits non-zero when more than N
fail, so scripts/test.sh keeps new SQL portable while the port goes on.
"""
import bisect
import os
import pathlib
import re
import subprocess
import sys

# A keyword followed by more: a bare "DELETE" is an HTTP method (the fake Prolific's routes).
STATEMENT = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\s+\S")
# The start of a statement's PostgreSQL text in a store::dialect::Sql, whole or
# as the first piece of a concat! or format!.
POSTGRES_SIDE = re.compile(r"postgres:\s*(?:(?:concat|format)!\(\s*)?$")
# "...", r"...", r#"..."# (not byte strings); no nested raw-string hashes beyond one.
LITERAL = re.compile(r'r#"(.*?)"#|r"(.*?)"|"((?:[^"\\]|\\.)*)"', re.S)


def unescape(body):
    body = re.sub(r"\\\n\s*", "", body)  # line continuation
    return body.replace('\\"', '"').replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")


def postgres_pages(sql):
    """store::dialect::pages: a page query as the server runs it on PostgreSQL."""
    agg, out, rest = "json_group_array(json_array(", [], sql
    while agg in rest:
        at = rest.index(agg)
        out.append(rest[:at] + "json_agg(json_build_array(")
        rest, depth, end = rest[at + len(agg):], 2, None
        for i, ch in enumerate(rest):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0:
                end = i + 1
                break
        end = len(rest) if end is None else end
        out.append(rest[:end] + "::text")
        rest = rest[end:]
    sql = "".join(out) + rest
    return re.sub(r"json_each\(\$(\d+)\)",
                  r"(SELECT value::bigint AS value FROM json_array_elements_text($\1::json))", sql)


def whole(sql):
    """Balanced quotes and parentheses: not a fragment of a concat!."""
    depth, quoted = 0, False
    for ch in sql:
        if ch == "'":
            quoted = not quoted
        elif not quoted:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth < 0:
                return False
    return depth == 0 and not quoted


def statements(root, unchecked):
    """(file:line, statement) of each literal statement under root; the
    `postgres:` texts that are not one go to `unchecked`."""
    for path in sorted(root.rglob("*.rs")):
        # Unit tests build their own tables; backups are of SQLite files
        # (PostgreSQL's are pg_dump's, docs/deploy.md).
        if path.name.endswith("_tests.rs") or path.name == "backup.rs":
            continue
        text = path.read_text()
        # Unit tests sit at the end of a file and build their own tables.
        text = text.split("#[cfg(test)]")[0]
        for m in LITERAL.finditer(text):
            before = text[max(0, m.start() - 40) : m.start()].rstrip()
            if before.endswith("QueryBuilder::new("):
                continue  # the head of a statement push_values completes
            if before.endswith("sqlite:"):
                continue  # SQLite's side of a dialect! (its postgres: side is checked)
            raw = m.group(1) if m.group(1) is not None else m.group(2)
            body = raw if raw is not None else unescape(m.group(3))
            line = text.count("\n", 0, m.start()) + 1
            if not STATEMENT.match(body) or "{" in body or not whole(body):
                if POSTGRES_SIDE.search(before):
                    unchecked.append(f"{path}:{line}")
                continue
            yield f"{path}:{line}", postgres_pages(body)


def failures(url, found):
    """One psql session: PREPARE each statement, map errors back by line."""
    lines, starts = [], []
    for n, (_, sql) in enumerate(found):
        starts.append(len(lines) + 1)
        lines.extend(f"PREPARE hardneg_check_{n} AS {sql};".splitlines())
        lines.append(f"DEALLOCATE hardneg_check_{n};")
    r = subprocess.run(["psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=0", "-f", "-"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True)
    failed = {}
    for line in r.stderr.splitlines():
        m = re.match(r"psql:<stdin>:(\d+): ERROR:\s*(.*)", line)
        if m:
            n = bisect.bisect_right(starts, int(m.group(1))) - 1
            failed.setdefault(n, m.group(2))
    return failed


def psql(url, sql):
    subprocess.run(["psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True, capture_output=True)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    server, listing = sys.argv[1], "--list-failing" in sys.argv
    root = pathlib.Path(__file__).resolve().parent.parent
    scratch = f"hardneg_sql_check_{os.getpid()}"
    psql(server, f"CREATE DATABASE {scratch}")
    try:
        url = server.rsplit("/", 1)[0] + "/" + scratch
        for migration in sorted((root / "migrations" / "postgres").glob("*.sql")):
            subprocess.run(["psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(migration)], check=True)
        unchecked = []
        found = list(statements(root / "src", unchecked))
        failed = failures(url, found)
    finally:
        psql(server, f"DROP DATABASE {scratch}")
    if listing:
        for n, err in sorted(failed.items()):
            print(f"{found[n][0]}: {err}")
    print(f"{len(found) - len(failed)} of {len(found)} statements prepare on PostgreSQL; {len(failed)} do not")
    for where in unchecked:
        print(f"{where}: a postgres: text that is not a whole literal statement, so it is not checked")
    if unchecked:
        sys.exit("write each backend's text of a store::dialect::Sql whole (no concat!, no format!)")
    if "--max-failing" in sys.argv:
        limit = int(sys.argv[sys.argv.index("--max-failing") + 1])
        if len(failed) > limit:
            sys.exit(f"more statements fail on PostgreSQL than the {limit} allowed: new SQL must run on both backends")


if __name__ == "__main__":
    main()
