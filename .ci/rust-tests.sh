#!/usr/bin/env bash
# The Rust tests as `make test` runs them: every unit test, then each area
# (module) of the server's one integration-test binary in a process of its
# own, as each was a binary of its own before they were merged (issue 59).
# One link, the old isolation: an area's tests fix their slot grid once per
# process (tests/it/common: `slot`), share the metrics recorder and start
# their real API server only with the tests of their own area.
# Usage: .ci/rust-tests.sh   (prints libtest's output; exits 1 on a failure)
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
status=0
cargo test --workspace --exclude frontend --no-fail-fast --lib --bins || status=1
cargo test --workspace --exclude frontend --doc || status=1
# Each crate's tests/it binary, built as the workspace builds it (one
# feature set: `-p app` alone would build app without `ssr`), with the
# folder cargo runs a package's tests in.
binaries="$(cargo test --workspace --exclude frontend --tests --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "it" and m.get("executable"):
        print(os.path.dirname(m["manifest_path"]), m["executable"])')"
[ "$(wc -l <<< "$binaries")" = 2 ] || { say "expected two test binaries (app, server): $binaries"; exit 1; }
while read -r dir it; do
  cd "$dir"
  if [ "$dir" != "$ROOT/server" ]; then
    "$it" || status=1
    continue
  fi
  tests="$("$it" --list --format terse 2>/dev/null | sed -n 's/: test$//p')"
  out="$(mktemp -d)"
  # Two areas at a time (BERTH_TEST_AREAS): each area's output is printed
  # whole when it ends, so two areas' lines never interleave.
  for area in $(sed 's/::.*//' <<< "$tests" | sort -u); do
    while [ "$(jobs -rp | wc -l)" -ge "${BERTH_TEST_AREAS:-2}" ]; do wait -n || true; done
    (
      # --exact with the area's full names: `clusters::` would also match `real_clusters::`.
      mapfile -t names < <(grep "^$area::" <<< "$tests")
      "$it" --exact "${names[@]}" > "$out/$area.log" 2>&1 || touch "$out/$area.failed"
      flock "$out/print.lock" bash -c "echo \"==> server tests: $area\"; cat '$out/$area.log'"
    ) &
  done
  wait
  if compgen -G "$out/*.failed" > /dev/null; then
    status=1
    say "server test areas that failed: $(cd "$out" && ls -- *.failed | sed 's/\.failed$//' | tr '\n' ' ')"
  fi
  rm -rf "$out"
done <<< "$binaries"
exit $status
