#!/usr/bin/env bash
# The answer round trip under load, as anyone can repeat it (docs/performance.md,
# "The answer round trip"): starts a release server on a temporary data dir
# with the demo study, pinned to one core, logs N annotators in and starts
# the study for each (untimed), then drives `GET next` -> `POST answer` in a
# closed loop with wrk (scripts/bench/roundtrip.lua) pinned to another core.
# Prints the CPU model, round trips/s, p50/p99 per round trip, and the
# server's CPU per round trip (utime + stime of all its threads from
# /proc/PID/stat over the loop, divided by the round trips).
#
#   scripts/bench-roundtrip.sh [annotators=50] [seconds=10] [items=2000]
#
# Environment: HARDNEG_BIN (default target/release/hardneg, built if missing),
# SERVER_CORE (default 0), DRIVER_CORE (default 1), RUNS (default 1),
# MODES (default "pair combined", alternated within each run): "pair" is
# `GET next` -> `POST answer`, two exchanges per item; "combined" is
# `POST answer?next=true`, whose response carries the next task, one
# exchange per item (as the survey page's server function makes it),
# BACKENDS (default "sqlite"; "sqlite postgres" runs both in turn, each run).
# On PostgreSQL the server gets a fresh database on the cluster at
# HARDNEG_PG_URL (a throw-away one from scripts/pg-cluster.sh when unset),
# whose postmaster is pinned to the server's core, so its backends share
# that core too; their CPU is printed beside the server's, and the sum is
# the figure to set against SQLite's (whose work runs inside the server).
# CALLGRIND=1 runs the server under `valgrind --tool=callgrind` and prints
# the instructions it executed per round trip (user space, all threads; the
# kernel's share is not counted), a figure that a busy machine does not move;
# use few annotators and items there (e.g. 8 annotators, 20 s, 300 items):
# the server runs ~50x slower. The profile is kept as callgrind.out.roundtrip
# (callgrind_annotate --inclusive=yes callgrind.out.roundtrip).
# Needs wrk (Debian/Ubuntu: apt-get install wrk; installed here when run as
# root), curl and taskset (util-linux).
set -euo pipefail
cd "$(dirname "$0")/.."
annotators=${1:-50}
seconds=${2:-10}
items=${3:-2000}
server_core=${SERVER_CORE:-0}
driver_core=${DRIVER_CORE:-1}
runs=${RUNS:-1}
bin=${HARDNEG_BIN:-target/release/hardneg}

if ! command -v wrk >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get install -y wrk >/dev/null
    else
        echo "wrk is missing: install it (Debian/Ubuntu: sudo apt-get install wrk; macOS: brew install wrk)" >&2
        exit 1
    fi
fi
for tool in curl taskset; do
    command -v $tool >/dev/null || { echo "$tool is missing" >&2; exit 1; }
done
if [ ! -x "$bin" ]; then
    echo "building $bin (cargo build --release --features ssr --bin hardneg)..." >&2
    cargo build --release --features ssr --bin hardneg
fi

cpu_ticks() { # utime + stime of every thread of a process, in clock ticks
    awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

pg_ticks() { # utime + stime of the PostgreSQL cluster's backends (children of its postmaster)
    local pm=$1 total=0 p
    for p in $(pgrep -P "$pm"); do
        total=$((total + $(cpu_ticks "$p" 2>/dev/null || echo 0)))
    done
    echo $total
}

backends=${BACKENDS:-sqlite}
modes=${MODES:-pair combined}
for mode in $modes; do
    [[ $mode == pair || $mode == combined ]] || { echo "MODES: \"pair\" and/or \"combined\", not \"$mode\"" >&2; exit 1; }
done
postmaster=
if [[ " $backends " == *" postgres "* ]]; then
    if [ -z "${HARDNEG_PG_URL:-}" ]; then
        eval "$(./scripts/pg-cluster.sh start)"
        trap './scripts/pg-cluster.sh stop "$HARDNEG_PG_DIR"' EXIT
    fi
    postmaster=$(head -n1 "$HARDNEG_PG_DIR/data/postmaster.pid")
    taskset -a -cp "$server_core" "$postmaster" >/dev/null
fi

one_run() { # one_run BACKEND MODE
    local tmp server base pid backend=$1 mode=$2 database=()
    tmp=$(mktemp -d)
    if [ "$backend" = postgres ]; then
        local name="hardneg_bench_$$_$RANDOM"
        psql "$HARDNEG_PG_URL" -XqAc "CREATE DATABASE $name"
        database=(--database "${HARDNEG_PG_URL%/*}/$name")
    fi
    mkdir -p "$tmp/site"
    # Pinned from its start, so every thread it makes inherits the core.
    local wrap=()
    if [ "${CALLGRIND:-0}" = 1 ]; then
        # Counting starts at the loop (callgrind_control -i on), not at start-up.
        wrap=(valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$tmp/cg.out")
    fi
    RUST_LOG=warn taskset -c "$server_core" "${wrap[@]}" "$bin" --data-dir "$tmp/data" "${database[@]}" serve --bind 127.0.0.1:0 \
        --demo --demo-size "$items" --site-dir "$tmp/site" >"$tmp/server.out" 2>"$tmp/server.err" &
    pid=$!
    trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' RETURN
    for _ in $(seq 3000); do
        base=$(sed -n 's/^hardneg listening on //p' "$tmp/server.out")
        [ -n "$base" ] && break
        kill -0 $pid 2>/dev/null || { cat "$tmp/server.err" >&2; return 1; }
        sleep 0.2
    done
    [ -n "$base" ] || { echo "the server did not start" >&2; return 1; }

    # Accounts, logins and starts: before the timed loop.
    local cookies=() name cookie
    for i in $(seq "$annotators"); do
        name="load$i"
        echo "load password $i" | "$bin" --data-dir "$tmp/data" "${database[@]}" user add "$name" --role annotator \
            --password-stdin >/dev/null
        cookie=$(curl -fsS -o /dev/null -D - -H 'content-type: application/json' \
            -d "{\"username\":\"$name\",\"password\":\"load password $i\"}" "$base/api/v1/session" |
            sed -n 's/^[Ss]et-[Cc]ookie: \([^;]*\).*/\1/p' | head -n1)
        [ -n "$cookie" ] || { echo "login of $name failed" >&2; return 1; }
        curl -fsS -o /dev/null -X POST -H "Cookie: $cookie" "$base/api/v1/studies/1/start"
        cookies+=("$cookie")
    done

    local before after ticks_per_s out
    ticks_per_s=$(getconf CLK_TCK)
    before=$(cpu_ticks $pid)
    local pg_before=0 pg_after=0
    [ "$backend" = postgres ] && pg_before=$(pg_ticks "$postmaster")
    [ "${CALLGRIND:-0}" = 1 ] && callgrind_control -i on $pid >/dev/null 2>&1
    out=$(taskset -c "$driver_core" wrk -t "$annotators" -c "$annotators" -d "${seconds}s" --timeout 10s \
        -s scripts/bench/roundtrip.lua "$base" -- 1 "$mode" "${cookies[@]}")
    after=$(cpu_ticks $pid)
    [ "$backend" = postgres ] && pg_after=$(pg_ticks "$postmaster")
    if [ "${CALLGRIND:-0}" = 1 ]; then
        callgrind_control -i off $pid >/dev/null 2>&1
        callgrind_control -d $pid >/dev/null 2>&1
        sleep 1
    fi
    local trips
    trips=$(echo "$out" | awk '$1 == "round_trips" { print $2 }')
    echo "$out" | awk '
        $1 == "round_trips_per_s" { rate = $2 } $1 == "p50_ms" { p50 = $2 } $1 == "p99_ms" { p99 = $2 }
        $1 == "round_trips" { n = $2 } $1 == "failures" { f = $2 } $1 == "annotators_finished" { done = $2 }
        END { printf "round trips/s %s (%s round trips), p50 %s ms, p99 %s ms, failures %s, annotators who ran out of items %s\n", rate, n, p50, p99, f, done }'
    awk -v b="$before" -v a="$after" -v hz="$ticks_per_s" -v n="$trips" \
        'BEGIN { printf "server CPU per round trip: %.0f us (%.2f s of CPU)\n", (a - b) / hz * 1e6 / n, (a - b) / hz }'
    if [ "$backend" = postgres ]; then
        awk -v b="$pg_before" -v a="$pg_after" -v sb="$before" -v sa="$after" -v hz="$ticks_per_s" -v n="$trips" \
            'BEGIN { printf "PostgreSQL backends CPU per round trip: %.0f us; server + PostgreSQL: %.0f us\n",
                     (a - b) / hz * 1e6 / n, ((a - b) + (sa - sb)) / hz * 1e6 / n }'
    fi
    if [ "${CALLGRIND:-0}" = 1 ]; then
        local ir
        ir=$(cat "$tmp"/cg.out* | awk '$1 == "totals:" { s += $2 } END { print s }')
        awk -v ir="$ir" -v n="$trips" 'BEGIN { printf "instructions per round trip (callgrind, user space): %.0f\n", ir / n }'
        cat "$tmp"/cg.out* >callgrind.out.roundtrip
    fi
}

echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -n1), $(nproc) cores; server on core $server_core, wrk on core $driver_core"
echo "server: $bin; $annotators annotators, ${seconds} s closed loop, $items demo items"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq "$runs"); do
    for backend in $backends; do
        for mode in $modes; do
            echo "run $run, $backend, $mode:"
            one_run "$backend" "$mode"
        done
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
