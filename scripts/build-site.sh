#!/usr/bin/env bash
# Builds the browser client (wasm + JS glue + CSS) into target/site/pkg and
# the server binary, without cargo-leptos (same result, minutes less setup).
# The client files get content-hashed names (hardneg.<hash>.js, …_bg.wasm,
# .css; the server reads the name from target/site/output-name), so they can
# be cached forever. The client is built as it ships: optimised, shrunk with
# wasm-opt, with brotli and gzip copies next to the files, so the tests
# (page weight included) run on what people download. RELEASE=1 builds the
# server optimised too; SERVER=0 builds the client only; DEBUG_CLIENT=1
# builds a debug client instead (quicker to rebuild while working on the UI;
# the page weight test fails on it).
set -euo pipefail
cd "$(dirname "$0")/.."
site=target/site
server_flags=()
if [ "${RELEASE:-0}" = 1 ]; then server_flags=(--release); fi
if [ "${DEBUG_CLIENT:-0}" = 1 ]; then
  optimise=0; wasm_profile=dev; wasm_dir=debug
else
  optimise=1; wasm_profile=wasm-release; wasm_dir=wasm-release
fi
# Not linted (scripts/test.sh lints the server build): no clippy wrapper here.
# A target dir of its own, so the server can build at the same time (test.sh):
# the two share no compiled crate anyway (another target and profile).
client_target=target/client
env -u RUSTC_WORKSPACE_WRAPPER CARGO_TARGET_DIR="$client_target" cargo rustc --lib --crate-type cdylib --target wasm32-unknown-unknown --no-default-features --features hydrate \
  --profile "$wasm_profile"
out=target/site-build
rm -rf "$out" && mkdir -p "$out"
wasm-bindgen --target web --no-typescript --out-dir "$out" --out-name hardneg \
  "$client_target/wasm32-unknown-unknown/$wasm_dir/hardneg.wasm"
if [ "$optimise" = 1 ]; then
  # binaryen from npm (scripts/setup.sh): Debian's older wasm-opt breaks hydration.
  wasm_opt=target/tools/node_modules/.bin/wasm-opt
  "$wasm_opt" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-reference-types --enable-multivalue -o "$out/hardneg_bg.opt.wasm" "$out/hardneg_bg.wasm"
  mv "$out/hardneg_bg.opt.wasm" "$out/hardneg_bg.wasm"
fi
cat style/main.css style/pages.css style/kinds.css > "$out/hardneg.css"
hash=$(cat "$out/hardneg.js" "$out/hardneg_bg.wasm" "$out/hardneg.css" | sha256sum | cut -c1-16)
name="hardneg.$hash"
mkdir -p "$site/pkg"
rm -f "$site"/pkg/hardneg.* "$site"/pkg/hardneg_bg.*
mv "$out/hardneg.js" "$site/pkg/$name.js"
mv "$out/hardneg_bg.wasm" "$site/pkg/${name}_bg.wasm"
mv "$out/hardneg.css" "$site/pkg/$name.css"
if [ -d "$out/snippets" ]; then rm -rf "$site/pkg/snippets" && mv "$out/snippets" "$site/pkg/"; fi
rm -rf "$out"
if [ "$optimise" = 1 ]; then
  for f in "$site/pkg/$name.js" "$site/pkg/${name}_bg.wasm" "$site/pkg/$name.css"; do
    gzip -9 -k -f "$f"
  done
  node -e '
    const fs = require("fs"), zlib = require("zlib");
    for (const f of process.argv.slice(1)) {
      const q = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } };
      fs.writeFileSync(f + ".br", zlib.brotliCompressSync(fs.readFileSync(f), q));
    }' "$site/pkg/$name.js" "$site/pkg/${name}_bg.wasm" "$site/pkg/$name.css"
fi
# Written last: a server never names files that are not there yet.
echo "$name" > "$site/output-name"
if [ -d assets ] && [ -n "$(ls -A assets)" ]; then cp -r assets/. "$site/"; fi
# SERVER=0 (scripts/test.sh) leaves the server to `cargo test`, which builds
# it with the dev-dependencies' features: building it here as well compiled
# hardneg and every dependency whose features differ a second time.
if [ "${SERVER:-1}" != 0 ]; then cargo build --bin hardneg --features ssr "${server_flags[@]}"; fi
