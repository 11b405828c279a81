#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for tests and benchmarks (issue 36):
#
#   eval "$(scripts/pg-cluster.sh start [PARENT])"   # sets HARDNEG_PG_URL and HARDNEG_PG_DIR
#   scripts/pg-cluster.sh stop "$HARDNEG_PG_DIR"
#
# `start` makes a new cluster in a temporary directory (under PARENT, /tmp
# by default; the tests pass a tmpfs, benchmarks keep the disk) with Debian's
# PostgreSQL binaries (/usr/lib/postgresql/*/bin), listening only on
# 127.0.0.1 at a free port, with a database `hardneg` and trust
# authentication for local connections (nothing else can reach it). The
# server may not run as root, so when run as root the cluster belongs to the
# `postgres` user. It prints shell assignments for the URL and the
# directory; `stop` stops that cluster and deletes its directory.
set -euo pipefail

bindir=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)}
[ -x "$bindir/initdb" ] || {
    echo "PostgreSQL's server binaries are missing (Debian/Ubuntu: apt-get install postgresql)" >&2
    exit 1
}

as_owner() { # runs a command as the cluster's owner
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

case "${1:-}" in
start)
    dir=$(mktemp -d "${2:-/tmp}/hardneg-pg.XXXXXX")
    chmod 755 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    port=$(free_port)
    as_owner "$bindir/initdb" -D "$dir/data" -U hardneg --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
        >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    # Sockets in the cluster's own directory: no clash with a system server.
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c fsync=on" start \
        >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    as_owner "$bindir/createdb" -h 127.0.0.1 -p "$port" -U hardneg hardneg
    echo "HARDNEG_PG_URL=postgres://hardneg@127.0.0.1:$port/hardneg; export HARDNEG_PG_URL"
    echo "HARDNEG_PG_DIR=$dir; export HARDNEG_PG_DIR"
    ;;
stop)
    dir=${2:?usage: pg-cluster.sh stop DIR}
    case "$dir" in */hardneg-pg.*) ;; *) echo "not a cluster made by pg-cluster.sh: $dir" >&2; exit 1 ;; esac
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
*)
    echo "usage: pg-cluster.sh start | stop DIR" >&2
    exit 2
    ;;
esac
