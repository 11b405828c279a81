#!/usr/bin/env bash
# Builds the browser client (wasm + JS glue + CSS) into target/site/pkg and
# the server binary, without cargo-leptos (same result, minutes less setup).
# RELEASE=1 builds both optimised.
set -euo pipefail
cd "$(dirname "$0")/.."
site=target/site
if [ "${RELEASE:-0}" = 1 ]; then
  wasm_profile=wasm-release; server_flags=(--release); wasm_dir=wasm-release
else
  wasm_profile=dev; server_flags=(); wasm_dir=debug
fi
cargo build --lib --target wasm32-unknown-unknown --no-default-features --features hydrate --profile "$wasm_profile"
mkdir -p "$site/pkg"
wasm-bindgen --target web --no-typescript --out-dir "$site/pkg" --out-name hardneg \
  "target/wasm32-unknown-unknown/$wasm_dir/hardneg.wasm"
cp style/main.css "$site/pkg/hardneg.css"
if [ -d assets ] && [ -n "$(ls -A assets)" ]; then cp -r assets/. "$site/"; fi
cargo build --bin hardneg --features ssr "${server_flags[@]}"
