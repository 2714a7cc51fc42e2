#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and the README's
walkthrough: it answers specc's requests from a JSON answer book written by hand (it shows
the plumbing works, not that a model can do the task).

Usage: fake-openai-server.py PORT BOOK.json

The book: {"planner": {"<node id>": <submit_plan arguments>},
           "workers": {"<task id>": [[{"name": ..., "arguments": {...}}, ...], ...]}}
A worker's step is the number of assistant messages in its conversation; a reviewer is
answered with no findings. Prints "listening PORT" once it serves.
"""
import json, re, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def answer(req, book):
    choice = req.get("tool_choice")
    user = next((m.get("content") or "" for m in req.get("messages", []) if m.get("role") == "user"), "")
    if isinstance(choice, dict):
        name = choice.get("function", {}).get("name")
        if name == "submit_review":
            return [("submit_review", {"findings": []})]
        if name == "submit_plan":
            node = json.loads(user).get("node", {}).get("id", "")
            return [("submit_plan", book["planner"][node])]
        raise KeyError(f"no answer for a forced {name}")
    task = re.search(r"# Task `([^`]+)`", user).group(1)
    step = sum(1 for m in req.get("messages", []) if m.get("role") == "assistant")
    return [(c["name"], c.get("arguments", {})) for c in book["workers"][task][step]]

def main():
    port, book = int(sys.argv[1]), json.load(open(sys.argv[2]))
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def reply(self, code, body):
            b = json.dumps(body).encode()
            self.send_response(code); self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(b))); self.end_headers(); self.wfile.write(b)
        def do_GET(self):
            self.reply(200, {"object": "list", "data": [{"id": "local-model", "object": "model"}]})
        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            try:
                calls = answer(req, book)
            except (KeyError, IndexError, AttributeError) as e:
                return self.reply(400, {"error": {"message": f"the answer book has no answer: {e}"}})
            tool_calls = [{"id": f"call_{i}", "type": "function",
                           "function": {"name": n, "arguments": json.dumps(a)}} for i, (n, a) in enumerate(calls)]
            chars = sum(len(m.get("content") or "") for m in req.get("messages", [])) + len(json.dumps(req.get("tools", [])))
            self.reply(200, {"id": "chatcmpl-fake", "object": "chat.completion", "model": req.get("model"),
                             "choices": [{"index": 0, "finish_reason": "tool_calls",
                                          "message": {"role": "assistant", "content": None, "tool_calls": tool_calls}}],
                             "usage": {"prompt_tokens": chars // 4, "completion_tokens": 100, "total_tokens": chars // 4 + 100}})
    server = ThreadingHTTPServer(("127.0.0.1", port), H)
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()

if __name__ == "__main__":
    main()
