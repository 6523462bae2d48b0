"""Drive the gateway (`mcp-gateway`) with the official Python MCP client, over stdio or HTTP.

Usage: python gateway_client.py [--mode legacy|2026-07-28|both] GATEWAY_COMMAND [ARGS...]
       python gateway_client.py [--mode ...] http://127.0.0.1:PORT/mcp

Behind the gateway are three servers of other SDKs, each under its name as prefix: `tsv1_` (the
TypeScript SDK v1 `elicitation_server.mjs`, 2025-11-25 only), `py_` (the Python SDK
`gateway_python_server.py`) and `tsv2_` (the TypeScript SDK v2 `v2_server.mjs`).

In each mode (`legacy`: the `initialize` handshake and a session; `2026-07-28`: stateless
requests, questions as `input_required` results the client answers from the same callback):
tools/list shows each server's tools under its prefix and nothing else; a form of each server
is answered (accept and decline); structured content is kept; the v1 server's -32042 flow is
completed and retried (a URL input request in 2026-07-28, where no completion notification may
arrive).

Prints one line per check and exits non-zero on the first failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import deque
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

from mcp import Client, StdioServerParameters, UrlElicitationRequiredError
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp.types import (
    URL_ELICITATION_REQUIRED,
    ElicitCompleteNotification,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    Implementation,
    TextContent,
)

EXPECTED_PROTOCOL = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
MODES = list(EXPECTED_PROTOCOL)
REQUEST_TIMEOUT = 60.0
NOTIFICATION_WAIT = 10.0
FLOW_URL = "https://connect.example.test/flow?id="

TOOLS = sorted(
    [f"tsv1_{t}" for t in ("ask_form", "ask_url", "needs_url", "bad_schema", "ask_model", "ask_roots")]
    + [f"py_{t}" for t in ("echo", "ask_city", "era")]
    + [f"tsv2_{t}" for t in ("greet", "ask_color")]
)

Answer = Callable[[ElicitRequestParams], ElicitResult]


class CheckFailed(Exception):
    pass


def check(condition: bool, what: str, detail: Any = None) -> None:
    if not condition:
        raise CheckFailed(f"{what}: got {detail!r}" if detail is not None else what)
    print(f"  ok: {what}")


def leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def text_of(result: Any, error: bool = False) -> str:
    check(bool(result.is_error) == error, f"result is {'an error' if error else 'not an error'}", result)
    check(len(result.content) == 1 and isinstance(result.content[0], TextContent), "one text block", result.content)
    return result.content[0].text


class Script:
    """Answers elicitation requests from a queue (or a fallback) and records what arrives."""

    def __init__(self) -> None:
        self.requests: list[ElicitRequestParams] = []
        self.answers: deque[Answer] = deque()
        self.fallback: Answer | None = None
        self.unexpected: list[ElicitRequestParams] = []
        self.completed: dict[str, int] = {}
        self.completion = asyncio.Event()

    async def elicit(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        self.requests.append(params)
        answer = self.answers.popleft() if self.answers else self.fallback
        if answer is None:
            self.unexpected.append(params)
            return ElicitResult(action="decline")
        return answer(params)

    async def on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, ElicitCompleteNotification):
            elicitation_id = message.params.elicitation_id
            self.completed[elicitation_id] = self.completed.get(elicitation_id, 0) + 1
            self.completion.set()

    async def wait_for_completion(self, elicitation_id: str) -> None:
        async def arrived() -> None:
            while elicitation_id not in self.completed:
                self.completion.clear()
                await self.completion.wait()

        try:
            await asyncio.wait_for(arrived(), NOTIFICATION_WAIT)
        except TimeoutError:
            raise CheckFailed(f"no notifications/elicitation/complete for {elicitation_id}") from None


async def listing(client: Client) -> None:
    print("tools/list")
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    check(sorted(tools) == TOOLS, "every server's tools, each under its prefix", sorted(tools))
    greet = tools["tsv2_greet"]
    check(greet.description == "Greets someone by name.", "the description is kept", greet.description)
    check((greet.output_schema or {}).get("properties", {}).get("greeting", {}).get("type") == "string",
          "the output schema is kept", greet.output_schema)
    greeting = await client.call_tool("tsv2_greet", {"name": "Ada"})
    check(text_of(greeting) == "Hello, Ada!", "tsv2_greet answers")
    check(greeting.structured_content == {"greeting": "Hello, Ada!"}, "its structured content", greeting.structured_content)
    echoed = await client.call_tool("py_echo", {"text": "through"})
    check(echoed.structured_content == {"echo": "through"}, "py_echo's structured content", echoed.structured_content)


async def forms(client: Client, script: Script) -> None:
    print("forms")
    content = {"name": "Grace", "age": 40, "color": "red", "subscribe": True, "topics": ["news"]}
    script.answers.append(lambda _: ElicitResult(action="accept", content=content))
    text = text_of(await client.call_tool("tsv1_ask_form", {}))
    form = script.requests[-1]
    check(isinstance(form, ElicitRequestFormParams) and form.message == "Tell us about you", "the v1 server's form", form)
    check(form.requested_schema.get("required") == ["name"], "name is required", form.requested_schema)
    check(json.loads(text) == {"action": "accept", "content": content}, "the v1 server got the answer", text)
    script.answers.append(lambda _: ElicitResult(action="decline"))
    text = text_of(await client.call_tool("tsv1_ask_form", {}))
    check(json.loads(text) == {"action": "decline", "content": None}, "the v1 server got the decline", text)

    script.answers.append(lambda _: ElicitResult(action="accept", content={"city": "Oslo", "country": "Norway"}))
    text = text_of(await client.call_tool("py_ask_city", {}))
    check(script.requests[-1].message == "Which city do you live in?", "the Python server's form", script.requests[-1])
    check(text == "city: Oslo, Norway", "the Python server got the answer", text)
    script.answers.append(lambda _: ElicitResult(action="decline"))
    check(text_of(await client.call_tool("py_ask_city", {})) == "no city (decline)", "the Python server got the decline")

    script.answers.append(lambda _: ElicitResult(action="accept", content={"color": "blue", "shade": "dark"}))
    text = text_of(await client.call_tool("tsv2_ask_color", {}))
    check(script.requests[-1].message == "Which color do you like best?", "the v2 server's form", script.requests[-1])
    check(text == "color: blue (dark)", "the v2 server got the answer", text)
    script.answers.append(lambda _: ElicitResult(action="cancel"))
    check(text_of(await client.call_tool("tsv2_ask_color", {}), error=True) == "no color (cancel)", "the v2 server got the cancel")


async def url_required(mode: str, client: Client, script: Script) -> None:
    print(f"the -32042 flow ({mode})")
    if mode == "legacy":
        try:
            result = await client.call_tool("tsv1_needs_url", {})
        except MCPError as error:
            check(error.code == URL_ELICITATION_REQUIRED, f"tsv1_needs_url fails with {URL_ELICITATION_REQUIRED}", error.code)
            required = UrlElicitationRequiredError.from_error(error.error)
        else:
            raise CheckFailed(f"tsv1_needs_url: expected error -32042, got {result!r}")
        listed = required.elicitations[0]
        check(listed.url.startswith(FLOW_URL) and bool(listed.elicitation_id), "it lists the flow", listed)
        await script.wait_for_completion(listed.elicitation_id)
        print("  ok: notifications/elicitation/complete arrived for that id")
        check(text_of(await client.call_tool("tsv1_needs_url", {})) == "needs_url: authorized", "the retry succeeds")
    else:
        asked = len(script.requests)

        def accept_flow(params: ElicitRequestParams) -> ElicitResult:
            check(isinstance(params, ElicitRequestURLParams) and params.url.startswith(FLOW_URL), "a URL request", params)
            return ElicitResult(action="accept")

        script.fallback = accept_flow
        try:
            result = await client.call_tool("tsv1_needs_url", {})
        except MCPError as error:
            raise CheckFailed(f"a 2026-07-28 client must get no error {error.code}: {error}") from error
        finally:
            script.fallback = None
        check(len(script.requests) > asked, "the flow came as a URL input request", len(script.requests) - asked)
        check(script.requests[-1].message == "Authorize first", "with the error's message", script.requests[-1].message)
        check(text_of(result) == "needs_url: authorized", "the retried call succeeds")
        check(not script.completed, "no notifications/elicitation/complete in 2026-07-28", script.completed)


async def run(mode: str, target: list[str]) -> None:
    print(f"[python mcp {version('mcp')}, mode={mode}] gateway: {' '.join(target)}")
    server: Any = target[0] if target[0].startswith("http") else StdioServerParameters(command=target[0], args=target[1:])
    script = Script()
    async with Client(
        server,
        mode=mode,
        client_info=Implementation(name="interop-python-gateway", version="0"),
        read_timeout_seconds=REQUEST_TIMEOUT,
        elicitation_callback=script.elicit,
        message_handler=script.on_message,
    ) as client:
        check(client.protocol_version == EXPECTED_PROTOCOL[mode], f"negotiated {EXPECTED_PROTOCOL[mode]}", client.protocol_version)
        await listing(client)
        await forms(client, script)
        await url_required(mode, client, script)
        check(not script.unexpected, "no unexpected elicitation request", script.unexpected)
        check(not script.answers, "every scripted answer was used", len(script.answers))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=[*MODES, "both"], default="both")
    parser.add_argument("target", nargs=argparse.REMAINDER, help="the gateway's command, or its URL")
    args = parser.parse_args()
    if not args.target:
        parser.error("missing the gateway's command or URL")
    modes = MODES if args.mode == "both" else [args.mode]
    for mode in modes:
        try:
            asyncio.run(run(mode, args.target))
        except Exception as error:  # any client or transport error is a failed run
            for leaf in leaves(error):
                reason = str(leaf) if isinstance(leaf, CheckFailed) else f"{type(leaf).__name__}: {leaf}"
                print(f"FAILED (mode={mode}): {reason}", file=sys.stderr)
            return 1
    print(f"python client: all gateway checks passed ({', '.join(modes)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
