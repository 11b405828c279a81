#!/usr/bin/env bash
# Every test: unit, integration (real server + SQLite over HTTP) and
# end-to-end (headless Chromium). Sets up what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --browser
# Formatting and the layout rule (no import cycles between files) first: they fail in seconds.
cargo fmt --check
python3 scripts/import-cycles.py
# Clippy (`-D warnings`) lints every target of the crate as it is built for
# the tests: the same lints as `cargo clippy --all-targets --features ssr --
# -D warnings`, without checking every dependency a second time.
export RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/clippy-rustc"
SERVER=0 ./scripts/build-site.sh
cargo test --features ssr --benches --no-run
cargo test --features ssr
