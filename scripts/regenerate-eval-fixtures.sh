#!/usr/bin/env bash
# Re-captures fixtures/eval/: real outputs of cargo test, pytest (plain, -v, --junitxml) and
# node --test (tap, junit) on the suites in fixtures/eval/sources. Needs cargo, python3 with
# pytest, and node 20 or newer. Absolute paths in the outputs are rewritten to /work/.
set -euo pipefail
cd "$(dirname "$0")/.."
out=fixtures/eval
src=$out/sources
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/adder/src" "$tmp/adder/tests" "$tmp/py" "$tmp/js"
printf '[package]\nname = "adder"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n' > "$tmp/adder/Cargo.toml"
cp "$src/adder_lib.rs" "$tmp/adder/src/lib.rs"
cp "$src/adder_cli.rs" "$tmp/adder/tests/cli.rs"
cp "$src/test_calc.py" "$tmp/py/"
cp "$src/calc.test.mjs" "$tmp/js/"
(cd "$tmp/adder" && cargo test --offline --no-fail-fast > "$tmp/cargo.out" 2>&1 || true)
(cd "$tmp/py" && python3 -m pytest -p no:cacheprovider --junitxml="$tmp/pytest-junit.xml" > "$tmp/pytest.out" 2>&1 || true)
(cd "$tmp/py" && python3 -m pytest -v -p no:cacheprovider > "$tmp/pytest-v.out" 2>&1 || true)
(cd "$tmp/js" && node --test --test-reporter=tap calc.test.mjs > "$tmp/node.tap" 2>&1 || true)
(cd "$tmp/js" && node --test --test-reporter=junit calc.test.mjs > "$tmp/node-junit.xml" 2>&1 || true)
for f in cargo.out pytest.out pytest-v.out pytest-junit.xml node.tap node-junit.xml; do
  sed "s#$tmp#/work#g" "$tmp/$f" > "$out/$f"
done
echo "wrote $out"
