#!/usr/bin/env bash
# Assembles exactly the files the container image copies (Containerfile's
# runtime stage: COPY --from=build /src/target/package/ /) into a staging
# directory: the berth binary and the built site, nothing else.
# Usage: .ci/package.sh [release|dev] [staging dir]
#   release (default) builds them first; dev packages what `make build` made.
source "$(dirname "$0")/lib.sh"
PROFILE="${1:-release}"
STAGE="${2:-$ROOT/target/package}"
cd "$ROOT"
if [ "$PROFILE" = release ]; then
  bash .ci/build-site.sh release
  binary=target/release/berth
else
  binary=target/debug/berth
fi
[ -x "$binary" ] && [ -f target/site/pkg/berth.wasm ] || { echo "build the server and the site first (make build)" >&2; exit 1; }
rm -rf "$STAGE"
install -D -m 0755 "$binary" "$STAGE/usr/local/bin/berth"
mkdir -p "$STAGE/usr/share/berth"
cp -r target/site "$STAGE/usr/share/berth/site"
say "packaged into $STAGE: $(du -sh "$STAGE" | cut -f1)"
