#!/usr/bin/env bash
# Builds and runs hardneg on its embedded demo data. Extra arguments go to
# `hardneg serve` (for example --bind 0.0.0.0:3000).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --release
RELEASE=1 ./scripts/build-site.sh
exec ./target/release/hardneg serve --demo --data-dir "${HARDNEG_DATA_DIR:-./hardneg-data}" --site-dir target/site "$@"
