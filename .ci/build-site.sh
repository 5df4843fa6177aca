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

# Two bundles of the same frontend (app/src/pages/mod.rs, `pages!`): every
# page's (berth.*) and the people's pages' only (berth-people.*), which those
# pages load.
mkdir -p target/site/pkg
for bundle in berth berth-people; do
  say "building the WASM frontend: $bundle ($PROFILE)"
  features=(); [ "$bundle" = berth-people ] && features=(--features app/people-bundle)
  cargo build -p frontend --lib --target wasm32-unknown-unknown "${cargo_profile[@]}" "${features[@]}"
  wasm-bindgen --target web --no-typescript --out-dir target/site/pkg --out-name "$bundle" \
    "target/wasm32-unknown-unknown/$wasm_dir/frontend.wasm"
  # The hydration script loads pkg/<bundle>.wasm (cargo-leptos' naming).
  mv "target/site/pkg/${bundle}_bg.wasm" "target/site/pkg/$bundle.wasm"
  if [ "$PROFILE" = release ]; then
    wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      "target/site/pkg/$bundle.wasm" -o "target/site/pkg/$bundle.wasm"
  fi
done
cp -r style/assets/. target/site/
sass --no-source-map --style=compressed style/main.scss target/site/pkg/berth.css
# Precompressed beside each file, served to browsers that accept them
# (server/src/site_files.rs). The dev build's much larger WASM gets quicker levels.
command -v brotli >/dev/null || apt_install brotli
if [ "$PROFILE" = release ]; then levels=(-q 11 -9); else levels=(-q 4 -4); fi
for file in target/site/pkg/berth{,-people}.{wasm,js} target/site/pkg/berth.css; do
  brotli -f "${levels[0]}" "${levels[1]}" -o "$file.br" "$file"
  gzip -c "${levels[2]}" "$file" > "$file.gz"
done

say "building the server ($PROFILE)"
# Plain cargo at the workspace root (default-members), as a Rust engineer would run it;
# the browser tests use this binary, so they prove the plain build works.
cargo build "${server_flags[@]}"
