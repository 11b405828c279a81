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
# wasm-bindgen and wasm-opt take a while; their output is kept beside the
# client build, under the hash of what went in, and reused while that is the same.
wasm_in="$client_target/wasm32-unknown-unknown/$wasm_dir/hardneg.wasm"
key=$( { sha256sum < "$wasm_in"; echo "optimise=$optimise"; wasm-bindgen --version; } | sha256sum | cut -c1-16)
cache="$client_target/bindgen-$key"
if [ ! -f "$cache/.done" ]; then
  rm -rf "$client_target"/bindgen-*
  wasm-bindgen --target web --no-typescript --out-dir "$cache" --out-name hardneg "$wasm_in"
  if [ "$optimise" = 1 ]; then
    # binaryen from npm (scripts/setup.sh): Debian's older wasm-opt breaks hydration.
    wasm_opt=target/tools/node_modules/.bin/wasm-opt
    "$wasm_opt" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-reference-types --enable-multivalue -o "$cache/hardneg_bg.opt.wasm" "$cache/hardneg_bg.wasm"
    mv "$cache/hardneg_bg.opt.wasm" "$cache/hardneg_bg.wasm"
  fi
  touch "$cache/.done"
fi
cp -r "$cache/." "$out/" && rm -f "$out/.done"
cat style/main.css style/research.css style/pages.css style/kinds.css > "$out/hardneg.css"
hash=$(cat "$out/hardneg.js" "$out/hardneg_bg.wasm" "$out/hardneg.css" | sha256sum | cut -c1-16)
name="hardneg.$hash"
mkdir -p "$site/pkg"
# The server embeds target/site (build.rs) and cargo rebuilds it when any
# file there is newer than its last build: a run that changed nothing must
# leave every file, output-name included, as it was (bytes and time).
same_site() {
  [ "$(cat "$site/output-name" 2>/dev/null)" = "$name" ] || return 1
  for f in "$name.js" "${name}_bg.wasm" "$name.css"; do
    cmp -s "$out/${f/$name/hardneg}" "$site/pkg/$f" || return 1
    if [ "$optimise" = 1 ]; then [ -f "$site/pkg/$f.gz" ] && [ -f "$site/pkg/$f.br" ] || return 1; fi
  done
  if [ -d "$out/snippets" ]; then diff -rq "$out/snippets" "$site/pkg/snippets" >/dev/null || return 1; fi
}
if same_site; then
  echo "== the site is unchanged ($name): nothing rewritten"
else
  rm -f "$site"/pkg/hardneg.* "$site"/pkg/hardneg_bg.*
  mv "$out/hardneg.js" "$site/pkg/$name.js"
  mv "$out/hardneg_bg.wasm" "$site/pkg/${name}_bg.wasm"
  mv "$out/hardneg.css" "$site/pkg/$name.css"
  if [ -d "$out/snippets" ]; then rm -rf "$site/pkg/snippets" && mv "$out/snippets" "$site/pkg/"; fi
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
fi
rm -rf "$out"
# Assets copied only where they differ, for the same reason.
if [ -d assets ]; then
  while IFS= read -r -d '' f; do
    mkdir -p "$site/$(dirname "$f")"
    cmp -s "assets/$f" "$site/$f" || cp "assets/$f" "$site/$f"
  done < <(cd assets && find . -type f -print0)
fi
# SERVER=0 (scripts/test.sh) leaves the server to `cargo test`, which builds
# it with the dev-dependencies' features: building it here as well compiled
# hardneg and every dependency whose features differ a second time.
if [ "${SERVER:-1}" != 0 ]; then cargo build --bin hardneg --features ssr "${server_flags[@]}"; fi
