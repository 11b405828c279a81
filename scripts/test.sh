#!/usr/bin/env bash
# Every test: unit, integration (real server + SQLite over HTTP) and
# end-to-end (headless Chromium). Sets up what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --browser
./scripts/build-site.sh
cargo test --features ssr
