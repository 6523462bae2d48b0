"""Drive the quickstart server with the official Python MCP client over stdio.

Usage: python quickstart_client.py [--mode legacy|auto|both] SERVER_COMMAND [ARGS...]

`legacy` connects with the `initialize` handshake. `auto` is the client's default: it first
probes `server/discover`, which a handshake-era server answers with "method not found", and
then falls back to `initialize`. `both` (the default) runs the checks once per mode, each
against a fresh server process.

Prints one line per check and exits non-zero on the first failure.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from importlib.metadata import version
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation, TextContent

# What each connection mode negotiates with our server: `legacy` uses the `initialize`
# handshake; `auto` (the client's default) probes `server/discover`, which the server answers,
# and continues in the 2026-07-28 era; `2026-07-28` speaks that revision from the start.
EXPECTED_PROTOCOL = {"legacy": "2025-11-25", "auto": "2026-07-28", "2026-07-28": "2026-07-28"}
MODES = list(EXPECTED_PROTOCOL)
INVALID_PARAMS = -32602
REQUEST_TIMEOUT = 30.0


class CheckFailed(Exception):
    pass


def check(condition: bool, what: str, detail: Any = None) -> None:
    if not condition:
        raise CheckFailed(f"{what}: got {detail!r}" if detail is not None else what)
    print(f"  ok: {what}")


def leaves(error: BaseException) -> list[BaseException]:
    """The innermost exceptions of an exception group (task groups wrap what went wrong)."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def only_text(result: Any) -> str:
    check(not result.is_error, "result is not an error", result)
    check(len(result.content) == 1, "result has one content block", result.content)
    block = result.content[0]
    check(isinstance(block, TextContent), "content block is text", block)
    return block.text


async def run(mode: str, command: list[str]) -> None:
    print(f"[python mcp {version('mcp')}, mode={mode}] {' '.join(command)}")
    params = StdioServerParameters(command=command[0], args=command[1:])
    client_info = Implementation(name="interop-python", version="0")
    started = time.monotonic()
    async with Client(params, mode=mode, client_info=client_info, read_timeout_seconds=REQUEST_TIMEOUT) as client:
        check(client.protocol_version == EXPECTED_PROTOCOL[mode], f"negotiated {EXPECTED_PROTOCOL[mode]}", client.protocol_version)
        session = client.session
        if mode == "legacy":
            check(session.initialize_result is not None, "connected through the initialize handshake")
            check(session.discover_result is None, "no discover result was adopted", session.discover_result)
        else:
            check(session.initialize_result is None, "no initialize handshake in the 2026-07-28 era")
        # Without a handshake or a probe the server names itself in each result's `_meta`.
        info = client.server_info
        if mode == "2026-07-28" and info is None:
            meta = (await client.list_tools()).meta or {}
            info = Implementation.model_validate(meta.get("io.modelcontextprotocol/serverInfo") or {}) if meta else None
        check(info is not None and info.name == "quickstart", "server name is quickstart", info)

        listed = await client.list_tools()
        # The version probe of `auto` must not stall the first call (a server that ignores
        # `server/discover` makes this client wait about ten seconds before falling back).
        elapsed = time.monotonic() - started
        check(elapsed < 3.0, "connecting and the first call took under 3 s", f"{elapsed:.2f} s")
        tools = {tool.name: tool for tool in listed.tools}
        check(set(tools) == {"add", "echo", "text_stats"}, "tools are add, echo, text_stats", sorted(tools))
        required = {"add": ["a", "b"], "echo": ["text"], "text_stats": ["text"]}
        for name, fields in required.items():
            schema = tools[name].input_schema
            check(schema.get("type") == "object", f"{name} inputSchema is an object", schema)
            check(sorted(schema.get("required", [])) == fields, f"{name} requires {fields}", schema)
        out_schema = tools["text_stats"].output_schema
        check(out_schema is not None and out_schema.get("type") == "object", "text_stats has an outputSchema", out_schema)

        text = only_text(await client.call_tool("add", {"a": 2, "b": 3}))
        check(text == "5", 'add(2, 3) returns "5"', text)

        text = only_text(await client.call_tool("echo", {"text": "hello"}))
        check(text == "hello", 'echo("hello") returns "hello"', text)

        # The client validates structuredContent against the listed outputSchema inside call_tool.
        result = await client.call_tool("text_stats", {"text": "one two\nthree"})
        check(not result.is_error, "text_stats is not an error", result)
        expected = {"characters": 13, "words": 3, "lines": 2}
        check(result.structured_content == expected, f"text_stats structuredContent is {expected}", result.structured_content)

        try:
            result = await client.call_tool("no_such_tool", {})
        except MCPError as error:
            check(error.code == INVALID_PARAMS, f"unknown tool fails with JSON-RPC error {INVALID_PARAMS}", error.code)
            check("no_such_tool" in error.message, "the error names the tool", error.message)
        else:
            raise CheckFailed(f"unknown tool: expected an error, got {result!r}")

        if mode == "legacy":
            # `ping` is not part of the 2026-07-28 revision.
            try:
                await session.send_ping()
            except MCPError as error:
                raise CheckFailed(f"ping failed: {error.code} {error.message}") from error
            print("  ok: ping answered")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=[*MODES, "both"], default="both")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="server command and arguments")
    args = parser.parse_args()
    if not args.command:
        parser.error("missing the server command")
    modes = MODES if args.mode == "both" else [args.mode]
    for mode in modes:
        try:
            asyncio.run(run(mode, args.command))
        except Exception as error:  # any client or transport error is a failed interop run
            for leaf in leaves(error):
                reason = str(leaf) if isinstance(leaf, CheckFailed) else f"{type(leaf).__name__}: {leaf}"
                print(f"FAILED (mode={mode}): {reason}", file=sys.stderr)
            return 1
    print(f"python client: all checks passed ({', '.join(modes)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
