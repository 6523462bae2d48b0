"""Drive the example servers with the official Python MCP client over Streamable HTTP.

Usage: python http_client.py [--mode legacy|auto|2026-07-28|both] ELICITATION_URL QUICKSTART_URL

Both servers must already be listening (for example the `combined` test server, named
`elicitation`, with `--port N --url-port 0`, and the `quickstart` example with `--port M`). For each mode (`legacy`: the initialize handshake and a session;
`auto`, the client's default: a `server/discover` probe first, then stateless 2026-07-28
requests; `2026-07-28` from the start):

  1. quickstart: list the tools and call `add`, `echo` and `text_stats`;
  2. elicitation: answer the form of `create_project` with accept, decline and cancel;
  3. in the 2026-07-28 era, over the same transport, the checks of `elicitation_client.py`
     that are particular to it: one `input_required` round by hand, `process_data` (short;
     long with proceed true and false), and the URL flows of `auth_via_url` and
     `protected_action` (whose -32042 error becomes a URL input request).

In the legacy mode the client ends its session with DELETE when it disconnects. Prints one line
per check and exits non-zero on the first failure.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from importlib.metadata import version
from typing import Any

import elicitation_client
from mcp import Client
from mcp.types import ElicitRequestFormParams, ElicitResult, Implementation, TextContent

# What each connection mode negotiates with our server: `legacy` uses the `initialize`
# handshake; `auto` (the client's default) probes `server/discover`, which the server answers,
# and continues in the 2026-07-28 era; `2026-07-28` speaks that revision from the start.
EXPECTED_PROTOCOL = {"legacy": "2025-11-25", "auto": "2026-07-28", "2026-07-28": "2026-07-28"}
MODES = list(EXPECTED_PROTOCOL)
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


def text_of(result: Any) -> str:
    check(len(result.content) == 1, "result has one content block", result.content)
    block = result.content[0]
    check(isinstance(block, TextContent), "content block is text", block)
    return block.text


def client_info() -> Implementation:
    return Implementation(name="interop-python-http", version="0")


async def quickstart(mode: str, url: str) -> None:
    print(f"[python mcp {version('mcp')}, mode={mode}] quickstart server at {url}")
    async with Client(url, mode=mode, client_info=client_info(), read_timeout_seconds=REQUEST_TIMEOUT) as client:
        check(client.protocol_version == EXPECTED_PROTOCOL[mode], f"negotiated {EXPECTED_PROTOCOL[mode]}", client.protocol_version)
        # Without a handshake or a probe the server names itself in each result's `_meta`.
        info = client.server_info
        if mode == "2026-07-28" and info is None:
            meta = (await client.list_tools()).meta or {}
            info = Implementation.model_validate(meta.get("io.modelcontextprotocol/serverInfo") or {}) if meta else None
        check(info is not None and info.name == "quickstart", "server name is quickstart", info)
        listed = await client.list_tools()
        names = sorted(tool.name for tool in listed.tools)
        check(names == ["add", "echo", "text_stats"], "tools are add, echo, text_stats", names)
        result = await client.call_tool("add", {"a": 2, "b": 3})
        check(not result.is_error, "add is not an error", result)
        check(text_of(result) == "5", 'add(2, 3) returns "5"', result)
        result = await client.call_tool("echo", {"text": "hello"})
        check(text_of(result) == "hello", 'echo("hello") returns "hello"', result)
        result = await client.call_tool("text_stats", {"text": "one two\nthree"})
        expected = {"characters": 13, "words": 3, "lines": 2}
        check(result.structured_content == expected, f"text_stats structuredContent is {expected}", result)


async def elicitation(mode: str, url: str) -> None:
    print(f"[python mcp {version('mcp')}, mode={mode}] elicitation server at {url}")
    answers: list[ElicitResult] = []
    asked: list[Any] = []

    async def answer(_context: Any, params: Any) -> ElicitResult:
        asked.append(params)
        if not answers:
            raise CheckFailed(f"unexpected elicitation: {params!r}")
        return answers.pop(0)

    async with Client(
        url,
        mode=mode,
        client_info=client_info(),
        read_timeout_seconds=REQUEST_TIMEOUT,
        elicitation_callback=answer,
    ) as client:
        check(client.protocol_version == EXPECTED_PROTOCOL[mode], f"negotiated {EXPECTED_PROTOCOL[mode]}", client.protocol_version)
        listed = await client.list_tools()
        names = sorted(tool.name for tool in listed.tools)
        check("create_project" in names, "create_project is listed", names)

        answers.append(ElicitResult(action="accept", content={"projectName": "demo", "framework": "react"}))
        result = await client.call_tool("create_project", {})
        check(not result.is_error, "accepted create_project is not an error", result)
        check(text_of(result) == "Created project 'demo' with framework: react", "accept creates the project", result)
        check(len(asked) == 1 and isinstance(asked[0], ElicitRequestFormParams), "one form was asked", asked)
        check(asked[0].message == "Please provide the project details.", "the form's message", asked[0].message)

        answers.append(ElicitResult(action="decline"))
        result = await client.call_tool("create_project", {})
        check(not result.is_error and "declined" in text_of(result), "decline creates nothing", result)

        answers.append(ElicitResult(action="cancel"))
        result = await client.call_tool("create_project", {})
        check(result.is_error is True, "cancelled create_project is a tool error", result)
        check(text_of(result) == "Project creation cancelled by the user.", "cancel is reported", result)


async def modern_elicitation(mode: str, url: str) -> None:
    print(f"[python mcp {version('mcp')}, mode={mode}] elicitation server at {url}: the 2026-07-28 era")

    async def scenario(client: Client, script: elicitation_client.Script) -> None:
        await elicitation_client.rounds_by_hand(client, script)
        await elicitation_client.process_data(client, script)
        await elicitation_client.url_flows(mode, client, script)

    await elicitation_client.session(mode, url, "elicitation", scenario)


async def run(mode: str, elicitation_url: str, quickstart_url: str) -> None:
    await quickstart(mode, quickstart_url)
    await elicitation(mode, elicitation_url)
    if mode != "legacy":
        await modern_elicitation(mode, elicitation_url)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=[*MODES, "both"], default="both")
    parser.add_argument("elicitation_url")
    parser.add_argument("quickstart_url")
    args = parser.parse_args()
    modes = MODES if args.mode == "both" else [args.mode]
    for mode in modes:
        try:
            asyncio.run(run(mode, args.elicitation_url, args.quickstart_url))
        except Exception as error:  # any client or transport error is a failed interop run
            for leaf in leaves(error):
                checked = isinstance(leaf, (CheckFailed, elicitation_client.CheckFailed))
                reason = str(leaf) if checked else f"{type(leaf).__name__}: {leaf}"
                print(f"FAILED (mode={mode}): {reason}", file=sys.stderr)
            return 1
    print(f"python client: all checks passed ({', '.join(modes)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
