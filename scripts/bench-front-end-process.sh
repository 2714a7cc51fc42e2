#!/usr/bin/env bash
# The front end against pulldown-cmark, both as processes (issue 40, point 3; design:
# perf.front-end-process): `specc plan FILE --emit intent` (read, parse, lower, every
# diagnostic, the intent tree as JSON on stdout) against `pulldown-baseline FILE`
# (pulldown-cmark's offset iteration with the same options, the same allocator), timed with
# hyperfine in one run, and the ratio of the medians.
#
#   scripts/bench-front-end-process.sh            # the Rust Reference, cloned at a pinned commit
#   scripts/bench-front-end-process.sh FILE.md    # any Markdown file
#
# Without FILE the script clones rust-lang/reference (network: run it on a workstation, not
# in CI) into target/bench-data/ and concatenates every `src/**/*.md` in byte order of its
# path, a blank line after each: about 1.1 MB. Needs git, cargo and hyperfine.
set -euo pipefail
cd "$(dirname "$0")/.."

REFERENCE_COMMIT=3b38834b39f732c64686f7c64aa29dcf3cd83ba5
RUNS=${RUNS:-10}

file=${1:-}
if [[ -z "$file" ]]; then
  data=target/bench-data
  repo=$data/reference
  if [[ ! -d "$repo/.git" ]]; then
    mkdir -p "$data"
    git init -q "$repo"
    git -C "$repo" fetch -q --depth 1 https://github.com/rust-lang/reference "$REFERENCE_COMMIT"
    git -C "$repo" checkout -q FETCH_HEAD
  fi
  file=$data/reference.md
  (cd "$repo" && find src -name '*.md' -print0 | LC_ALL=C sort -z |
    while IFS= read -r -d '' f; do cat "$f"; echo; done) >"$file"
fi

cargo build --release --quiet -p specc -p specc-tests --example pulldown-baseline
specc=target/release/specc
baseline=target/release/examples/pulldown-baseline

# Both must read the file whole; specc's diagnostics are counted, so a faster front end
# that drops one shows here.
"$baseline" "$file"
diagnostics=$("$specc" plan "$file" --emit intent 2>&1 >/dev/null | grep -cE '^[EW][0-9]{4}$' || true)
echo "specc: $diagnostics diagnostics on $(wc -c <"$file") bytes"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
hyperfine --style basic -i --warmup 3 --runs "$RUNS" --export-json "$out" \
  -n pulldown-cmark "$baseline $file" \
  -n specc "$specc plan $file --emit intent"
python3 - "$out" <<'EOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
p, s = r["pulldown-cmark"]["median"], r["specc"]["median"]
print(f"medians: pulldown-cmark {p*1000:.1f} ms, specc {s*1000:.1f} ms: {s/p:.2f}x")
EOF
