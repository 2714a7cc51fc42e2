#!/usr/bin/env bash
# Runs the README's "Your own spec" commands as written, in a fresh directory, against the
# scripted OpenAI-compatible server on 127.0.0.1:8080 (scripts/fake-openai-server.py with
# tests/readme/hello-book.json, hand-written answers: the plumbing, not a model). .ci/run
# runs it; `bash tests/readme/walkthrough.sh` from the repository's root runs it by hand.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/specc-readme.XXXXXX)
python3 "$root/scripts/fake-openai-server.py" 8080 "$root/tests/readme/hello-book.json" > "$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q listening "$work/server.log" && break; sleep 0.1; done
# The block after "## Your own spec": its commands, run from the root (the first one builds
# specc and puts it on PATH), then in the fresh directory.
block=$(awk '/^## Your own spec/{f=1} f&&/^```sh/{g=1;next} g&&/^```/{exit} g' "$root/README.md")
first=$(printf '%s\n' "$block" | head -n 1)
rest=$(printf '%s\n' "$block" | tail -n +2)
cd "$root"
eval "$first"
cd "$work"
set -x
eval "$rest"
test -f my-tool/out/hello/__main__.py
test -f report.html
echo "README walkthrough: ok"
