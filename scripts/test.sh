#!/usr/bin/env bash
# Every test: unit, integration (real server + SQLite over HTTP) and
# end-to-end (headless Chromium). Sets up what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --browser
# Formatting, lints and the layout rule (no import cycles between files) first: they fail in seconds.
cargo fmt --check
python3 scripts/import-cycles.py
cargo clippy --all-targets --features ssr -- -D warnings
./scripts/build-site.sh
cargo test --features ssr
