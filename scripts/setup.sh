#!/usr/bin/env bash
# Installs what building (and, with --browser, testing) needs on a fresh
# Debian machine with rustup; skips whatever is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ "${1:-}" = "--browser" ]; then
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    echo "== installing chromium and chromedriver (Debian packages)"
    sudo_ apt-get update -qq
    sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
fi

# The tests also check the PostgreSQL schema and SQL on a throw-away cluster
# (scripts/pg-cluster.sh) made with Debian's server binaries.
if [ "${1:-}" = "--browser" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "== installing postgresql (Debian package; no server is started)"
  sudo_ apt-get update -qq
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi

# mold links the test binaries in seconds (scripts/link-gcc falls back to
# the system linker without it, so a failed install only costs time).
if ! command -v mold >/dev/null; then
  echo "== installing mold (Debian package, the linker scripts/link-gcc prefers)"
  { sudo_ apt-get update -qq && sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mold >/dev/null; } ||
    echo "   mold could not be installed; linking with the system linker"
fi

# The browser tests run axe-core (npm package, pinned) on every page; they
# read target/tools/node_modules/axe-core/axe.min.js and never download it.
if [ "${1:-}" = "--browser" ] && [ ! -f target/tools/node_modules/axe-core/axe.min.js ]; then
  echo "== installing axe-core 4.14.1 (npm, into target/tools, for the browser tests)"
  mkdir -p target/tools
  npm install --silent --no-audit --no-fund --prefix target/tools axe-core@4.14.1
fi

# The export test reads parquet back with Hugging Face `datasets` (about a minute, once).
if [ "${1:-}" = "--browser" ] && ! python3 -c "import pyarrow, datasets, PIL" 2>/dev/null; then
  echo "== installing pyarrow, datasets and pillow (pip, for the parquet export test)"
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check pyarrow datasets pillow
fi

for c in rustfmt clippy; do
  if ! rustup component list --installed | grep -q "^$c"; then rustup component add "$c"; fi
done

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "== adding the wasm32 target"
  rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen's CLI must match the wasm-bindgen crate in Cargo.lock exactly.
want=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  echo "== installing wasm-bindgen-cli $want (about 3 minutes, once)"
  # Not --locked: its own lockfile names a crate version the registry may lack.
  cargo install wasm-bindgen-cli --version "$want"
fi

# wasm-opt for the site's client (scripts/build-site.sh, tests included):
# binaryen 132 from npm, into target/tools. Debian's binaryen 108 produces a
# wasm whose hydration fails.
if [ ! -x target/tools/node_modules/.bin/wasm-opt ]; then
  echo "== installing wasm-opt (npm package binaryen@132, into target/tools)"
  mkdir -p target/tools
  npm install --silent --no-audit --no-fund --prefix target/tools binaryen@132
fi
