#!/usr/bin/env python3
"""An MCP client test of `specc mcp`, with the official Python SDK (PyPI `mcp`).

    python3 tests/mcp/client.py SPECC_BINARY PROJECT_DIR

PROJECT_DIR is a copy of examples/textstats (its specc.toml answers every model from the
recording, offline). Drives the server over stdio as a coding agent would: initialize, list
the tools, preview, build with --allow-spend following its progress, status and show of a
landed task, trace; then a server without --allow-spend refuses to build, and a bad argument
is answered with a protocol error and the server goes on answering. Exits non-zero on the
first failed expectation. Run by tests/it/mcp.rs (design: driver.mcp).
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
try:  # the SDK's 2.x name, then its 1.x one
    from mcp.shared.exceptions import MCPError as McpError
except ImportError:
    from mcp.shared.exceptions import McpError


def expect(cond, what):
    if not cond:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {what}")



async def spending(binary, project):
    async with stdio_client(
        StdioServerParameters(command=binary, args=["mcp", project, "--allow-spend"])
    ) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            expect(init.server_info.name == "specc", "the server says it is specc")

            tools = {t.name: t for t in (await s.list_tools()).tools}
            for name in ["specc_preview", "specc_status", "specc_show", "specc_cost",
                         "specc_trace", "specc_drift", "specc_check", "specc_explain",
                         "specc_outline", "specc_node", "specc_follow", "specc_build",
                         "specc_approve"]:
                expect(name in tools, f"{name} is listed")
            expect(tools["specc_status"].annotations.read_only_hint is True,
                   "status is annotated read-only")
            expect(tools["specc_build"].annotations.read_only_hint is False
                   and tools["specc_build"].annotations.open_world_hint is True,
                   "build is annotated as writing and open-world")

            preview = await s.call_tool("specc_preview", {})
            expect(not preview.is_error, f"the preview answers: {preview.content[0].text[:200]}")
            sc = preview.structured_content
            expect(isinstance(sc, dict) and len(sc) > 0, "the preview is structured JSON")

            outline = await s.call_tool("specc_outline", {})
            ids = [n["id"] for n in outline.structured_content["nodes"]]
            expect("counting" in ids, f"the outline lists the sections: {ids}")
            node = await s.call_tool("specc_node", {"id": "counting"})
            expect("R-2" in node.structured_content["text"], "a node's text is the spec's")

            progress = []

            async def on_progress(p, total, message):
                progress.append(message)

            started = await s.call_tool("specc_build", {})
            expect(not started.is_error and started.structured_content["state"] == "running",
                   "a build starts and its id comes back at once")
            second = await s.call_tool("specc_build", {})
            expect(second.is_error and second.structured_content["code"] == "E0406",
                   "a second build of the same spec is refused while one runs")
            followed = await s.call_tool("specc_follow",
                                         {"build": started.structured_content["build"]},
                                         progress_callback=on_progress)
            sc = followed.structured_content
            expect(not followed.is_error and sc["state"] == "landed",
                   f"the build lands: {followed.content[0].text[:300]}")
            expect(len(progress) > 0, f"progress notifications arrived ({len(progress)})")

            status = await s.call_tool("specc_status", {})
            expect(not status.is_error, "status answers")
            st = status.structured_content
            landed = [t["task"] for t in st["status"]["landed"]]
            expect(len(landed) > 0, f"status names landed tasks: {landed}")

            show = await s.call_tool("specc_show", {"task": landed[0]})
            expect(not show.is_error, f"show answers for {landed[0]}")
            expect(show.structured_content.get("task") == landed[0]
                   or landed[0] in show.content[1].text,
                   "show tells that task's story")

            again = await s.call_tool("specc_build", {"follow": True})
            expect(again.structured_content["state"] == "landed",
                   "a build after the first one ended runs, followed in one call")

            trace = await s.call_tool("specc_trace", {})
            expect(not trace.is_error, "trace answers")
            expect("R-2" in trace.content[1].text, "trace follows the requirements")

            explain = await s.call_tool("specc_explain", {"code": "E0601"})
            expect("allow-spend" in explain.content[0].text, "explain answers a code")

            missing = await s.call_tool("specc_show", {"task": "no-such-task"})
            expect(missing.is_error and missing.structured_content.get("code"),
                   f"a failed command carries its code: {missing.content[0].text}")

            try:
                await s.call_tool("specc_show", {"task": 7})
                expect(False, "a bad argument is a protocol error")
            except McpError as e:
                expect(e.error.code == -32602, f"a bad argument is invalid params: {e}")
            try:
                await s.call_tool("specc_status", {"spec": "../elsewhere/spec.md"})
                expect(False, "a path outside the project is a protocol error")
            except McpError as e:
                expect(e.error.code == -32602, "a path outside the project is refused")
            again = await s.call_tool("specc_status", {})
            expect(not again.is_error, "the server goes on answering after a bad call")

            lib = os.path.join(project, "out", "src", "lib.rs")
            with open(lib, "a") as f:
                f.write("\n// design: no.such.decision\n")
            check = await s.call_tool("specc_check", {"path": "out"})
            codes = [d.get("code") for d in check.structured_content.get("diagnostics", [])]
            expect("E0206" in codes, f"check answers its diagnostics: {codes}")


async def refusing(binary, project):
    async with stdio_client(
        StdioServerParameters(command=binary, args=["mcp", project])
    ) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            r = await s.call_tool("specc_build", {})
            expect(r.is_error and r.structured_content["code"] == "E0601",
                   "without --allow-spend a build is refused with E0601")
            r = await s.call_tool("specc_approve", {})
            expect(r.is_error and r.structured_content["code"] == "E0601",
                   "without --allow-spend approve is refused")


async def main():
    binary, project = sys.argv[1], sys.argv[2]
    await refusing(binary, project)
    await spending(binary, project)
    print("all expectations held")


if __name__ == "__main__":
    asyncio.run(main())
