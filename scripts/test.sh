#!/usr/bin/env bash
# Every test: unit, integration (real server + SQLite over HTTP) and
# end-to-end (headless Chromium). Sets up what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage prints the seconds since the start, so a slow CI run says where.
stage() { echo "== [${SECONDS}s] $*" >&2; }
stage setup
./scripts/setup.sh --browser
# The tests' scratch (each test's data dir, the PostgreSQL cluster) on a
# tmpfs when the machine has one with room: the same SQLite files, servers
# and PostgreSQL, without the disk's journal and fsyncs (on this 2-core VM
# the SQLite API suite took 260 s and 444 CPU-seconds against 311 s and 530
# on the disk; the PostgreSQL one 386 and 294 s against 456 and 420 s, runs
# alternated with audits beside them). A SIGKILL test loses nothing
# there either: the page cache outlives the process. HARDNEG_TEST_TMPFS=0
# keeps them on the disk; benchmarks keep theirs on the disk always.
tmpfs=""
if [ "${HARDNEG_TEST_TMPFS:-1}" = 1 ] && [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -gt 4194304 ] 2>/dev/null; then
  tmpfs=/dev/shm
fi
# A throw-away PostgreSQL cluster for the PostgreSQL checks, stopped on any exit.
eval "$(./scripts/pg-cluster.sh start $tmpfs)"
cuda="" scratch=""
cleanup() {
  [ -z "$cuda" ] || kill -- "-$cuda" 2>/dev/null || true
  [ -z "$scratch" ] || rm -rf "$scratch"
  ./scripts/pg-cluster.sh stop "$HARDNEG_PG_DIR"
}
trap cleanup EXIT
# Formatting and the layout rule (no import cycles, layers one way) first: they fail in seconds.
stage checks
cargo fmt --check
python3 scripts/import-cycles.py
# The gate's own test: a wrong-way import planted in a copy of src/ fails it.
python3 scripts/import-cycles.py --self-test
# Every SQL statement (SQLite's side of a dialect! aside) must prepare on
# PostgreSQL, the second backend (docs/deploy.md).
python3 scripts/pg-sql-check.py "$HARDNEG_PG_URL" --max-failing 0
# Clippy (`-D warnings`) lints every target of the crate as it is built for
# the tests: the same lints as `cargo clippy --all-targets --features ssr --
# -D warnings`, without checking every dependency a second time.
export RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/clippy-rustc"
stage build
# The client builds beside the server: the server's dependencies compile
# meanwhile, and build.rs waits for the site it embeds while .building names
# a live process (a killed build's marker is not waited for). Either failing
# fails the run.
mkdir -p target/site && rm -f target/site/output-name
(
  trap 'rm -f target/site/.building' EXIT
  SERVER=0 ./scripts/build-site.sh
) &
client=$!
echo "$client" > target/site/.building
cargo test --features ssr --benches --no-run
# The test binaries, built here and run directly below: `cargo test` holds
# the build directory's lock while its tests run, which would keep the cuda
# build from overlapping them.
cargo test --features ssr --no-run --message-format=json-render-diagnostics | python3 -c '
import json, sys
bins = {}
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        bins[m["target"]["name"]] = m["executable"]
# As cargo runs them: the unit tests, then the integration suites by name.
for name in ["hardneg", "api", "e2e"]:
    print(bins[name])
' >target/test-bins
wait "$client"
mapfile -t bins <target/test-bins
api=${bins[1]}
# The cuda feature, compiled and linked (no GPU here) so that it cannot rot:
# the binary's test harness in the dev profile, on the dependencies built
# above (scripts/build-cuda.sh --dev; the CUDA compiler from PyPI wheels,
# about 1.2 GB, once). It runs beside the tests at the lowest priority, on
# the cores they leave idle (its nvcc pass alone took ~6 of CI's 38 minutes
# when it ran after them); its log is shown at the end. HARDNEG_CI_CUDA=0 skips it.
if [ "${HARDNEG_CI_CUDA:-1}" = 1 ]; then
  stage "cuda build started beside the tests (scripts/build-cuda.sh --dev, log: target/cuda-build.log)"
  # A session of its own, so that a failing run stops the whole build (cargo, nvcc) with it.
  setsid nice -n 19 ./scripts/build-cuda.sh --dev >target/cuda-build.log 2>&1 &
  cuda=$!
fi
# Each test's tempdir (TMPDIR) on the tmpfs chosen above, set only now so
# that the cuda build's temporary files stay on the disk.
if [ -n "$tmpfs" ]; then
  scratch=$(mktemp -d "$tmpfs/hardneg-tests.XXXXXX")
  export TMPDIR=$scratch
fi
stage "tests (SQLite)"
for bin in "${bins[@]}"; do
  echo "     Running $bin" >&2
  "$bin"
done
# The API suite again on PostgreSQL: each test's data dir gets a database of
# its own on the throw-away cluster (tests/api/helpers.rs, `database_of`).
stage "API tests on PostgreSQL"
HARDNEG_TEST_BACKEND=postgres "$api"
if [ -n "$cuda" ]; then
  stage "cuda build: waiting for it"
  status=0
  wait "$cuda" || status=$?
  tail -n 25 target/cuda-build.log >&2
  [ "$status" = 0 ] || { echo "the cuda build failed (exit $status): target/cuda-build.log" >&2; exit 1; }
fi
stage done
