#!/usr/bin/env bash
# Builds what cargo-leptos would, without needing cargo-leptos: the server
# binary, the hydration WASM + JS glue, and the stylesheet, into target/site.
# Usage: .ci/build-site.sh [dev|release]
source "$(dirname "$0")/lib.sh"
PROFILE="${1:-dev}"
ensure_toolchain

cd "$ROOT"
if [ "$PROFILE" = release ]; then
  cargo_profile=(--profile wasm-release); wasm_dir=wasm-release; server_flags=(--release)
else
  cargo_profile=(); wasm_dir=debug; server_flags=()
fi

say "building the WASM frontend ($PROFILE)"
# --emit-relocs keeps the linker's relocations, which wasm-split-cli needs to
# cut the module at each group of lazily loaded pages (app/src/pages/lazy_pages.rs).
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-C link-args=--emit-relocs" \
  cargo build -p frontend --lib --target wasm32-unknown-unknown "${cargo_profile[@]}"
split=target/wasm-split
rm -rf "$split" target/site/pkg && mkdir -p "$split" target/site/pkg
# The shell (berth.wasm), one chunk per group of pages plus chunks of the code
# groups share, and __wasm_split.js, which loads a group's chunks when the
# router first needs them.
wasm-split-cli --target web --out-name berth "target/wasm32-unknown-unknown/$wasm_dir/frontend.wasm" "$split"
# --keep-lld-exports: the chunks share the shell's function table and memory through its exports.
wasm-bindgen --target web --no-typescript --keep-lld-exports --out-dir target/site/pkg --out-name berth "$split/berth.wasm"
# The hydration script loads pkg/berth.wasm (cargo-leptos' naming).
mv target/site/pkg/berth_bg.wasm target/site/pkg/berth.wasm
find "$split" -maxdepth 1 \( -name '*.wasm' ! -name berth.wasm -o -name '*.js' \) -exec cp {} target/site/pkg/ \;
# The manifest and loader name cargo-leptos --split writes: with them the server
# preloads the chunks of the page it renders, so they download beside the shell.
python3 .ci/wasm_split_manifest.py target/site/pkg
cp target/site/pkg/__wasm_split.js target/site/pkg/__wasm_split.______________________.js
if [ "$PROFILE" = release ]; then
  for wasm in target/site/pkg/*.wasm; do
    wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext "$wasm" -o "$wasm"
  done
fi
cp -r style/assets/. target/site/
sass --no-source-map --style=compressed style/main.scss target/site/pkg/berth.css

say "building the server ($PROFILE)"
# Plain cargo at the workspace root (default-members), as a Rust engineer would run it;
# the browser tests use this binary, so they prove the plain build works.
cargo build "${server_flags[@]}"
