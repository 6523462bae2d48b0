"""Drive the notes example with the official Python MCP client over stdio: resources, templates,
subscriptions, prompts, completion, logging, sampling and roots.

Usage: python notes_client.py SERVER_COMMAND [ARGS...]

Prints one line per check and exits non-zero on the first failure.
"""

from __future__ import annotations

import asyncio
import sys
import warnings
from importlib.metadata import version
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CreateMessageResult,
    EmbeddedResource,
    Implementation,
    ListRootsResult,
    PromptReference,
    ResourceTemplateReference,
    Root,
    TextContent,
    TextResourceContents,
)

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002
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
    block = result.content[0]
    check(isinstance(block, TextContent), "content block is text", block)
    return block.text


async def expect_error(call: Any, code: int, what: str) -> None:
    try:
        result = await call
    except MCPError as error:
        check(error.code == code, f"{what} fails with JSON-RPC error {code}", (error.code, error.message))
    else:
        raise CheckFailed(f"{what}: expected an error, got {result!r}")


async def run(command: list[str]) -> None:
    print(f"[python mcp {version('mcp')}] {' '.join(command)}")
    params = StdioServerParameters(command=command[0], args=command[1:])
    logs: list[Any] = []
    notifications: list[Any] = []
    sampled: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async def on_message(message: Any) -> None:
        notifications.append(message)

    async def on_sampling(context: Any, params: Any) -> CreateMessageResult:
        sampled.append(params)
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="A Warm Welcome"), model="interop-model"
        )

    async def on_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///home/user/notes", name="notes")])

    async def until(what: str, found: Any) -> None:
        for _ in range(100):
            if found():
                check(True, what)
                return
            await asyncio.sleep(0.05)
        raise CheckFailed(f"{what}: nothing arrived; notifications were {notifications!r}")

    async with Client(
        params,
        mode="legacy",
        client_info=Implementation(name="interop-python-notes", version="0"),
        read_timeout_seconds=REQUEST_TIMEOUT,
        logging_callback=on_log,
        message_handler=on_message,
        sampling_callback=on_sampling,
        list_roots_callback=on_roots,
    ) as client:
        resources = (await client.list_resources()).resources
        check([r.uri for r in resources] == ["notes://index"], "resources/list shows the index", resources)
        templates = (await client.list_resource_templates()).resource_templates
        check([t.uri_template for t in templates] == ["notes://{name}"], "templates list notes://{name}", templates)

        contents = (await client.read_resource("notes://welcome")).contents
        check(len(contents) == 1 and isinstance(contents[0], TextResourceContents), "one text content", contents)
        check(contents[0].mime_type == "text/markdown", "the template's MIME type is used", contents[0])
        check("Welcome" in contents[0].text, "the note is read through the template", contents[0].text)
        await expect_error(client.read_resource("notes://missing"), RESOURCE_NOT_FOUND, "reading a missing note")

        await client.set_logging_level("info")
        await client.subscribe_resource("notes://welcome")
        text = only_text(await client.call_tool("write_note", {"name": "welcome", "text": "# Hello again"}))
        check(text == "saved `welcome`", "write_note saves", text)
        await until("a log message arrives", lambda: any("updated note" in str(l.data) for l in logs))
        await until(
            "the subscribed resource's update arrives",
            lambda: any(getattr(getattr(n, "params", None), "uri", None) == "notes://welcome" for n in notifications),
        )

        prompts = (await client.list_prompts()).prompts
        check([p.name for p in prompts] == ["summarize"], "prompts/list shows summarize", prompts)
        arguments = {a.name: a.required for a in prompts[0].arguments or []}
        check(arguments == {"name": True, "style": False}, "summarize's arguments", arguments)
        got = await client.get_prompt("summarize", {"name": "welcome", "style": "bullets"})
        check(isinstance(got.messages[0].content, EmbeddedResource), "the note is embedded", got.messages[0])
        check("bullets" in got.messages[1].content.text, "the style is used", got.messages[1])
        await expect_error(client.get_prompt("summarize", {}), INVALID_PARAMS, "a missing required argument")
        await expect_error(client.get_prompt("nope", {}), INVALID_PARAMS, "an unknown prompt")

        done = await client.complete(PromptReference(type="ref/prompt", name="summarize"), {"name": "style", "value": "b"})
        check(done.completion.values == ["bullets"], "completion of a prompt argument", done.completion)
        done = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="notes://{name}"), {"name": "name", "value": "wel"}
        )
        check(done.completion.values == ["welcome"], "completion of a template variable", done.completion)

        text = only_text(await client.call_tool("suggest_title", {"name": "welcome"}))
        check(text == "interop-model suggests: A Warm Welcome", "sampling goes through the client", text)
        check(len(sampled) == 1 and sampled[0].max_tokens == 30, "the sampling request was typed", sampled)
        text = only_text(await client.call_tool("workspaces", {}))
        check(text == "file:///home/user/notes (notes)", "roots come from the client", text)


def main() -> int:
    # The client flags logging/setLevel and resources/subscribe as deprecated for the 2026
    # revision; this server speaks 2025-11-25, where they are current.
    warnings.filterwarnings("ignore", message=r".* as of 2026-07-28")
    command = sys.argv[1:]
    if not command:
        print("usage: notes_client.py SERVER_COMMAND [ARGS...]", file=sys.stderr)
        return 2
    try:
        asyncio.run(run(command))
    except Exception as error:  # any client or transport error is a failed interop run
        for leaf in leaves(error):
            reason = str(leaf) if isinstance(leaf, CheckFailed) else f"{type(leaf).__name__}: {leaf}"
            print(f"FAILED: {reason}", file=sys.stderr)
        return 1
    print("python client: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
