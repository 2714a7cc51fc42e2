#!/usr/bin/env bash
# Regenerates every recorded fixture the tests replay, from hand-written answers or specc's
# deterministic outline planner (no real model, no network):
#   fixtures/llm/recorded-run/recording.jsonl       the ledger and `specc cost` tests
#   fixtures/planner/cases/*/recording.jsonl       one case per plan diagnostic (script.json)
#   fixtures/planner/{kvstore,twenty-sections,job-queue}.jsonl   outline plans
#   examples/textstats/recording.jsonl              the example build (answers.json)
#   fixtures/build/crash/recording.jsonl            the resume test's build (answers.json)
#   fixtures/build/serve/recording.jsonl            the serve/worker test's build (answers.json)
# Run it after changing the planner protocol, a prompt or the tools, then review the diff of
# the snapshots the tests produce (`cargo insta review`).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet -p specc-tests --example regenerate-fixtures -- "$@"
if [ $# -eq 0 ]; then
  python3 examples/textstats/make_answers.py
  cargo run --quiet -p specc-tests --example record-example -- examples/textstats
  cargo run --quiet -p specc-tests --example record-example -- fixtures/build/crash
  cargo run --quiet -p specc-tests --example record-example -- fixtures/build/serve
fi
