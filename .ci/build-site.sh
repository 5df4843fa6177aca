#!/usr/bin/env bash
# Builds what cargo-leptos would, without needing cargo-leptos: the server
# binary, the hydration WASM + JS glue, and the stylesheet, into target/site.
# Usage: .ci/build-site.sh [dev|release]
# BERTH_BUNDLES: which WASM bundles (default: both; `make run` builds `berth`
# alone, and the server then links it from every page, site_files.rs).
source "$(dirname "$0")/lib.sh"
PROFILE="${1:-dev}"
read -r -a bundles <<< "${BERTH_BUNDLES:-berth berth-people}"
phase "the Rust toolchain and npm packages"
ensure_toolchain
# Compiled while the project compiles (no dependency between them).
install_wasm_bindgen_in_background

cd "$ROOT"
if [ "$PROFILE" = release ]; then
  cargo_profile=(--profile wasm-release); wasm_dir=wasm-release; server_flags=(--release)
else
  cargo_profile=(); wasm_dir=debug; server_flags=()
fi

# Two bundles of the same frontend (app/src/pages/mod.rs, `pages!`): every
# page's (berth.*) and the people's pages' only (berth-people.*), which those
# pages load. Each is compiled, kept aside, and bound by wasm-bindgen at the
# end, when the CLI's background install is surely done.
# Kept aside per profile: a dev build run while a release build compiles
# its server must not hand the release its dev WASM to bind.
aside="target/site-wasm/$PROFILE"
mkdir -p target/site/pkg "$aside"
rm -f target/site/pkg/berth-people.*
for bundle in "${bundles[@]}"; do
  phase "building the WASM frontend: $bundle ($PROFILE)"
  features=(); [ "$bundle" = berth-people ] && features=(--features app/people-bundle)
  cargo build -p frontend --lib --target wasm32-unknown-unknown "${cargo_profile[@]}" "${features[@]}" 2>&1 |
    tee "$aside/$bundle.log"
  # No bundle builds with warnings (cargo replays them when nothing changed).
  if grep -q '^warning' "$aside/$bundle.log"; then
    say "the $bundle bundle builds with warnings (above)"; exit 1
  fi
  cp "target/wasm32-unknown-unknown/$wasm_dir/frontend.wasm" "$aside/$bundle.wasm"
done

phase "building the server ($PROFILE)"
# Plain cargo at the workspace root (default-members), as a Rust engineer would run it;
# the browser tests use this binary, so they prove the plain build works.
# --timings: target/cargo-timings/ keeps what each crate cost (docs/benchmarks.md).
cargo build --timings "${server_flags[@]}"

phase "waiting for wasm-bindgen-cli"
wait_wasm_bindgen
phase "binding, compressing and the stylesheet"
for bundle in "${bundles[@]}"; do
  wasm-bindgen --target web --no-typescript --out-dir target/site/pkg --out-name "$bundle" "$aside/$bundle.wasm"
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
# (server/src/web/site_files.rs). The dev build's much larger WASM gets quicker levels.
command -v brotli >/dev/null || apt_install brotli
if [ "$PROFILE" = release ]; then levels=(-q 11 -9); else levels=(-q 4 -4); fi
files=(target/site/pkg/berth.css)
for bundle in "${bundles[@]}"; do files+=("target/site/pkg/$bundle.wasm" "target/site/pkg/$bundle.js"); done
for file in "${files[@]}"; do
  brotli -f "${levels[0]}" "${levels[1]}" -o "$file.br" "$file"
  gzip -c "${levels[2]}" "$file" > "$file.gz"
done
phases_report "the build"
