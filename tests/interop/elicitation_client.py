"""Drive the elicitation examples with the official Python MCP client over stdio or HTTP.

Usage: python elicitation_client.py [--mode legacy|auto|2026-07-28|both] --part forms|url SERVER_COMMAND [ARGS...]
       python elicitation_client.py [--mode …] --part forms|url http://127.0.0.1:PORT/mcp

Given a URL instead of a command, it connects over Streamable HTTP to an example already
started with `--port`.

The client answers the server's elicitation requests from its `elicitation_callback` (which
makes it declare both form and URL mode) and sees server notifications through its
`message_handler`.

`--part forms` drives the `elicitation` example, the seed's two tools: in every mode it checks
`create_project` (accept, decline, cancel, with the requested form: fields, order, required,
enum, default) and `process_data` (short data without a question; long data with `proceed`
true and false, declined and cancelled).

`--part url` drives the `url_elicitation` example. `legacy` connects with the `initialize`
handshake: the server sends `elicitation/create` requests. It checks the URL-mode round trip of
`auth_via_url` (accept, visit the URL with urllib, wait for `notifications/elicitation/complete`
with the same id) and the -32042 error of `protected_action`, whose URL it visits before
retrying.

`auto` (the client's default) probes `server/discover` and, as our server answers it, continues
in the 2026-07-28 era, like `2026-07-28`: the server answers a call that asks the user with an
`input_required` result, which the client answers from the same callback before retrying the
call. There, `auth_via_url` sends a URL input request without an `elicitationId` (the callback
accepts and visits the URL; the tool names the flow that was visited, and no completion
notification is sent), and the -32042 error of `protected_action` becomes such a request too:
the callback visits the URL, the client retries, and the tool succeeds.

`both` (the default) runs the checks once per mode, each against a fresh server process.

Prints one line per check and exits non-zero on the first failure.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from typing import Any
from urllib.parse import parse_qs, urlsplit

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
    ErrorData,
    Implementation,
    InputRequiredResult,
    TextContent,
)

# What each connection mode negotiates with our server: `legacy` uses the `initialize`
# handshake; `auto` (the client's default) probes `server/discover`, which the server answers,
# and continues in the 2026-07-28 era; `2026-07-28` speaks that revision from the start.
EXPECTED_PROTOCOL = {"legacy": "2025-11-25", "auto": "2026-07-28", "2026-07-28": "2026-07-28"}
MODES = list(EXPECTED_PROTOCOL)
REQUEST_TIMEOUT = 30.0
# How long to wait for a notification the server should send at once.
NOTIFICATION_WAIT = 10.0

Answer = Callable[[ElicitRequestParams], ElicitResult | Awaitable[ElicitResult]]



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


def ok_text(result: Any) -> str:
    check(not result.is_error, "result is not an error", result)
    return text_of(result)


def error_text(result: Any) -> str:
    check(result.is_error is True, "result is an error (isError: true)", result)
    return text_of(result)


class Script:
    """Answers elicitation requests from a queue and records what arrives."""

    def __init__(self) -> None:
        self.requests: list[ElicitRequestParams] = []
        self.answers: deque[Answer] = deque()
        self.unexpected: list[ElicitRequestParams] = []
        self.completed: dict[str, int] = {}
        self.completion = asyncio.Event()
        self.transport_errors: list[Exception] = []

    def answer(self, answer: Answer) -> None:
        self.answers.append(answer)

    async def elicit(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        self.requests.append(params)
        if not self.answers:
            self.unexpected.append(params)
            return ElicitResult(action="decline")
        result = self.answers.popleft()(params)
        return await result if inspect.isawaitable(result) else result

    async def on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, ElicitCompleteNotification):
            elicitation_id = message.params.elicitation_id
            self.completed[elicitation_id] = self.completed.get(elicitation_id, 0) + 1
            self.completion.set()
        elif isinstance(message, Exception):
            self.transport_errors.append(message)

    async def wait_for_completion(self, elicitation_id: str) -> None:
        async def arrived() -> None:
            while elicitation_id not in self.completed:
                self.completion.clear()
                await self.completion.wait()

        try:
            await asyncio.wait_for(arrived(), NOTIFICATION_WAIT)
        except TimeoutError:
            raise CheckFailed(
                f"no notifications/elicitation/complete for {elicitation_id} within {NOTIFICATION_WAIT} s "
                f"(received: {self.completed})"
            ) from None


def visit(url: str) -> int:
    """Opens the page as a person would and presses its button (in a worker thread, so the client
    keeps reading). The page itself (GET) completes nothing; the button POSTs the id back. Returns
    the status of the POST, or of the page when it shows no button (an unknown or finished flow)."""
    status, html, cookie = fetch(url)
    if status != 200:
        return status
    check('method="post"' in html, "the page asks for a button press (a POST form)", html)
    # The page's one-time token goes back as a browser sends it: the cookie and the form's field.
    found = re.search(r'name="csrf" value="([^"]*)"', html)
    parts = urlsplit(url)
    form = urllib.parse.urlencode(
        {"id": parse_qs(parts.query)["id"][0], "csrf": found.group(1) if found else ""}
    ).encode()
    status, _, _ = fetch(f"{parts.scheme}://{parts.netloc}/auth", form, cookie)
    return status


def fetch(url: str, form: bytes | None = None, cookie: str = "") -> tuple[int, str, str]:
    """GETs `url`, or POSTs `form` to it (with `cookie`); returns the status, the body and the
    cookie the answer sets (its name and value)."""
    request = urllib.request.Request(url, data=form, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=NOTIFICATION_WAIT) as response:
            set_cookie = (response.headers.get("Set-Cookie") or "").split(";")[0]
            return response.status, response.read().decode(), set_cookie
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), ""


def check_page_url(url: str, elicitation_id: str) -> None:
    parts = urlsplit(url)
    check(
        parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.path == "/auth",
        "the URL is the example's own /auth page",
        url,
    )
    check(parse_qs(parts.query).get("id") == [elicitation_id], "the URL carries the elicitation id", url)


def check_form(params: ElicitRequestParams) -> None:
    """Checks `create_project`'s form as the seed has it: fields in order, required, enum, default."""
    check(isinstance(params, ElicitRequestFormParams), "create_project asks with a form", params)
    assert isinstance(params, ElicitRequestFormParams)
    check(params.message == "Please provide the project details.", "create_project's message", params.message)
    schema = params.requested_schema
    check(schema.get("type") == "object", "requestedSchema is an object", schema)
    properties = schema.get("properties", {})
    check(
        list(properties) == ["projectName", "framework", "includeTests"],
        "the fields are projectName, framework, includeTests, in that order",
        list(properties),
    )
    check(schema.get("required") == ["projectName"], "only projectName is required", schema.get("required"))
    name, framework, tests = properties["projectName"], properties["framework"], properties["includeTests"]
    check(name.get("type") == "string" and name.get("minLength") == 1, "projectName is a string with minLength 1", name)
    options = framework.get("enum") or [option.get("const") for option in framework.get("oneOf", [])]
    check(framework.get("type") == "string", "framework is a string", framework)
    check(options == ["react", "vue", "angular", "none"], "framework offers react, vue, angular, none", framework)
    check(
        tests.get("type") == "boolean" and tests.get("default") is True,
        "includeTests is a boolean defaulting to true",
        tests,
    )


async def form_mode(client: Client, script: Script) -> None:
    print("form mode: create_project")
    asked = len(script.requests)
    content = {"projectName": "demo", "framework": "angular", "includeTests": False}
    script.answer(lambda _: ElicitResult(action="accept", content=content))
    text = ok_text(await client.call_tool("create_project", {}))
    check(len(script.requests) == asked + 1, "create_project sent one elicitation request", len(script.requests) - asked)
    check_form(script.requests[-1])
    check(text == "Created project 'demo' with framework: angular", "accept returns the seed's text", text)

    script.answer(lambda _: ElicitResult(action="accept", content={"projectName": "bare"}))
    text = ok_text(await client.call_tool("create_project", {}))
    check(text == "Created project 'bare' with framework: none", "without a framework it is none", text)

    script.answer(lambda _: ElicitResult(action="accept", content={"projectName": ""}))
    text = error_text(await client.call_tool("create_project", {}))
    check("projectName" in text, "an empty projectName (minLength 1) is refused, naming it", text)

    script.answer(lambda _: ElicitResult(action="decline"))
    text = ok_text(await client.call_tool("create_project", {}))
    check(text == "Project creation cancelled: the user declined.", "decline is a plain-text result", text)

    script.answer(lambda _: ElicitResult(action="cancel"))
    text = error_text(await client.call_tool("create_project", {}))
    check(text == "Project creation cancelled by the user.", "cancel is a tool error", text)


async def url_mode(client: Client, script: Script) -> None:
    print("url mode: auth_via_url")
    asked = len(script.requests)
    script.answer(lambda _: ElicitResult(action="accept"))
    text = ok_text(await client.call_tool("auth_via_url", {}))
    check(len(script.requests) == asked + 1, "auth_via_url sent one elicitation request", len(script.requests) - asked)
    params = script.requests[-1]
    check(isinstance(params, ElicitRequestURLParams), "the request is a URL-mode request", params)
    assert isinstance(params, ElicitRequestURLParams)
    elicitation_id = params.elicitation_id
    check(bool(elicitation_id), "the request has an elicitationId", params)
    assert elicitation_id is not None
    check(bool(params.message), "the request has a message", params)
    check_page_url(params.url, elicitation_id)
    check("started" in text and elicitation_id in text, "accept says the flow started (naming its id)", text)

    check(elicitation_id not in script.completed, "no completion before the page is visited", script.completed)
    status, _, _ = await asyncio.to_thread(fetch, params.url)
    check(status == 200, "the page answers 200", status)
    await asyncio.sleep(0.2)
    check(elicitation_id not in script.completed, "opening the page without pressing its button completes nothing")
    status = await asyncio.to_thread(visit, params.url)
    check(status == 200, "visiting the URL with urllib answers 200", status)
    await script.wait_for_completion(elicitation_id)
    print("  ok: notifications/elicitation/complete arrived (message_handler) with the same elicitationId")
    status = await asyncio.to_thread(visit, params.url)
    check(status == 409, "a second visit answers 409", status)
    await asyncio.sleep(0.2)  # time for a wrongly repeated notification to arrive
    check(script.completed.get(elicitation_id) == 1, "the flow completed exactly once", script.completed)

    for action in ("decline", "cancel"):
        script.answer(lambda _, action=action: ElicitResult(action=action))
        text = ok_text(await client.call_tool("auth_via_url", {}))
        check("declined" in text and action in text, f"{action} says the user declined (action: {action})", text)


async def protected_action(client: Client, script: Script) -> None:
    print("url mode: protected_action")
    asked = len(script.requests)
    try:
        result = await client.call_tool("protected_action", {})
    except MCPError as error:
        check(error.code == URL_ELICITATION_REQUIRED, f"protected_action fails with error {URL_ELICITATION_REQUIRED}", error.code)
        required = UrlElicitationRequiredError.from_error(error.error)
        data = error.data
    else:
        raise CheckFailed(f"protected_action before authorization: expected error -32042, got {result!r}")
    check(len(script.requests) == asked, "no elicitation request came with the error", len(script.requests) - asked)
    check(len(required.elicitations) == 1, "the error lists one elicitation", data)
    listed = required.elicitations[0]
    check(listed.mode == "url" and bool(listed.elicitation_id), "it is a URL elicitation with an id", listed)
    assert listed.elicitation_id is not None
    check(bool(listed.message), "it has a message", listed)
    check_page_url(listed.url, listed.elicitation_id)

    status = await asyncio.to_thread(visit, listed.url)
    check(status == 200, "visiting the URL with urllib answers 200", status)
    await script.wait_for_completion(listed.elicitation_id)
    print("  ok: notifications/elicitation/complete arrived for that id")
    text = ok_text(await client.call_tool("protected_action", {}))
    check("completed" in text.lower(), "protected_action succeeds after the flow completed", text)


async def rounds_by_hand(client: Client, script: Script) -> None:
    """One multi round-trip call driven step by step: what the callback sees in 2026-07-28 is
    an input request of an `input_required` result, not a request from the server."""
    print("2026-07-28: create_project, one round by hand")
    first = await client.session.call_tool("create_project", {}, allow_input_required=True)
    check(isinstance(first, InputRequiredResult), "create_project answers input_required", first)
    assert isinstance(first, InputRequiredResult)
    requests = first.input_requests or {}
    check(list(requests) == ["input-0"], "one input request, keyed input-0", list(requests))
    request = requests["input-0"]
    check(request.method == "elicitation/create", "it is an elicitation", request.method)
    check(isinstance(request.params, ElicitRequestFormParams), "it is a form", request.params)
    check_form(request.params)
    check(bool(first.request_state), "it carries requestState", first.request_state)
    answer = ElicitResult(action="accept", content={"projectName": "by-hand", "framework": "vue"})
    done = await client.session.call_tool(
        "create_project", {}, input_responses={"input-0": answer}, request_state=first.request_state
    )
    check(ok_text(done) == "Created project 'by-hand' with framework: vue", "the retry completes the call", done)
    check(not script.requests, "the callback was not involved", script.requests)


async def process_data(client: Client, script: Script) -> None:
    print("form mode: process_data")
    asked = len(script.requests)
    text = ok_text(await client.call_tool("process_data", {"data": "short"}))
    check(text == "Processed 5 characters", "short data is processed", text)
    check(len(script.requests) == asked, "short data is processed without a question", len(script.requests) - asked)

    data = "x" * 150
    answers = (
        (ElicitResult(action="accept", content={"proceed": True}), "Processed 150 characters"),
        (ElicitResult(action="accept", content={"proceed": False}), "The user chose not to proceed."),
        (ElicitResult(action="decline"), "Processing cancelled by the user."),
        (ElicitResult(action="cancel"), "Processing cancelled by the user."),
    )
    for reply, expected in answers:
        script.answer(lambda _, reply=reply: reply)
        text = ok_text(await client.call_tool("process_data", {"data": data}))
        check(len(script.requests) == asked + 1, "long data asks one question", len(script.requests) - asked)
        asked += 1
        params = script.requests[-1]
        check(isinstance(params, ElicitRequestFormParams), "the question is a form", params)
        assert isinstance(params, ElicitRequestFormParams)
        check(params.message == "The data is 150 characters long. Continue?", "the question names the length", params.message)
        schema = params.requested_schema
        check(list(schema.get("properties", {})) == ["proceed"], "the form asks for `proceed` alone", schema)
        check(schema["properties"]["proceed"].get("type") == "boolean", "`proceed` is a boolean", schema)
        check(schema.get("required") == ["proceed"], "`proceed` is required", schema)
        check(text == expected, f"{reply.action} {reply.content or ''}: {expected}", text)


def visiting(script: Script, statuses: list[int]) -> Answer:
    """An answer that checks a 2026-era URL request, visits its URL, then accepts."""

    async def answer(params: ElicitRequestParams) -> ElicitResult:
        check(isinstance(params, ElicitRequestURLParams), "the input request is a URL-mode request", params)
        assert isinstance(params, ElicitRequestURLParams)
        check(params.elicitation_id is None, "it carries no elicitationId (2026-07-28)", params.elicitation_id)
        check(bool(params.message), "it has a message", params)
        statuses.append(await asyncio.to_thread(visit, params.url))
        return ElicitResult(action="accept")

    return answer


def flow_id(params: ElicitRequestParams) -> str:
    """The elicitation id of a URL request of the example: its page's `id` parameter."""
    assert isinstance(params, ElicitRequestURLParams)
    ids = parse_qs(urlsplit(params.url).query).get("id", [])
    check(len(ids) == 1 and bool(ids[0]), "the URL carries a flow id", params.url)
    check_page_url(params.url, ids[0])
    return ids[0]


async def modern_url_mode(client: Client, script: Script) -> None:
    print("url mode (2026-07-28): auth_via_url")
    asked = len(script.requests)
    statuses: list[int] = []
    script.answer(visiting(script, statuses))
    text = ok_text(await client.call_tool("auth_via_url", {}))
    check(len(script.requests) == asked + 1, "auth_via_url sent one input request", len(script.requests) - asked)
    check(statuses == [200], "the callback visited the URL (200)", statuses)
    visited = flow_id(script.requests[-1])
    check(
        text == f"Authorization flow {visited} started: finish it in the browser, then call protected_action.",
        "the retried tool names the flow the user visited",
        text,
    )
    status = await asyncio.to_thread(visit, script.requests[-1].url)
    check(status == 409, "a second visit answers 409 (the flow is complete)", status)
    await asyncio.sleep(0.2)  # time for a wrongly sent notification to arrive
    check(not script.completed, "no notifications/elicitation/complete in 2026-07-28", script.completed)

    for action in ("decline", "cancel"):
        script.answer(lambda _, action=action: ElicitResult(action=action))
        text = ok_text(await client.call_tool("auth_via_url", {}))
        check(text == f"The user declined to authorize (action: {action}).", f"{action} is reported", text)


async def modern_protected_action(client: Client, script: Script) -> None:
    print("url mode (2026-07-28): protected_action")
    asked = len(script.requests)
    statuses: list[int] = []
    script.answer(visiting(script, statuses))
    try:
        result = await client.call_tool("protected_action", {})
    except MCPError as error:
        raise CheckFailed(
            f"protected_action: the error must become an input request, got {error.code} {error}"
        ) from error
    check(
        len(script.requests) == asked + 1,
        "error -32042 became one URL input request",
        len(script.requests) - asked,
    )
    check(
        script.requests[-1].message == "Authorize the example app before using this action.",
        "the input request has the error's message",
        script.requests[-1].message,
    )
    flow_id(script.requests[-1])
    check(statuses == [200], "the callback visited the URL (200)", statuses)
    text = ok_text(result)
    check(text == "Protected action completed: you are authorized.", "the retry succeeded", text)
    check(not script.completed, "no notifications/elicitation/complete in 2026-07-28", script.completed)

    # Refusing the flow ends the call with the tool's error, as a result: 2026-07-28 has no
    # error -32042.
    for action in ("decline", "cancel"):
        asked = len(script.requests)
        script.answer(lambda _, action=action: ElicitResult(action=action))
        try:
            result = await client.call_tool("protected_action", {})
        except MCPError as error:
            raise CheckFailed(
                f"protected_action after {action}: expected a tool result with isError, got error {error.code} {error}"
            ) from error
        check(len(script.requests) == asked + 1, f"the flow was asked once ({action})", len(script.requests) - asked)
        text = error_text(result)
        check("authoriz" in text.lower(), f"{action} ends the call with a tool error about the authorization", text)


async def session(
    mode: str, server: list[str] | str, name: str, scenario: Callable[[Client, Script], Any]
) -> None:
    """Connects in `mode` to `server` (a command, over stdio; or a Streamable HTTP URL), checks
    that it is named `name`, and runs `scenario`."""
    target = server if isinstance(server, str) else StdioServerParameters(command=server[0], args=server[1:])
    client_info = Implementation(name="interop-python-elicitation", version="0")
    script = Script()
    async with Client(
        target,
        mode=mode,
        client_info=client_info,
        read_timeout_seconds=REQUEST_TIMEOUT,
        elicitation_callback=script.elicit,
        message_handler=script.on_message,
    ) as client:
        check(client.protocol_version == EXPECTED_PROTOCOL[mode], f"negotiated {EXPECTED_PROTOCOL[mode]}", client.protocol_version)
        # Without a handshake or a probe the server names itself in each result's `_meta`.
        info = client.server_info
        if mode == "2026-07-28" and info is None:
            meta = (await client.list_tools()).meta or {}
            info = Implementation.model_validate(meta.get("io.modelcontextprotocol/serverInfo") or {}) if meta else None
        check(info is not None and info.name == name, f"server name is {name}", info)
        await scenario(client, script)
        check(not script.unexpected, "no unexpected elicitation request arrived", script.unexpected)
        check(not script.answers, "every scripted answer was used", len(script.answers))
        check(not script.transport_errors, "the client reported no transport errors", script.transport_errors)


async def url_flows(mode: str, client: Client, script: Script) -> None:
    """The URL-mode checks of the era `mode` connects in."""
    if mode == "legacy":
        # Before `auth_via_url`: once this session completes any flow it is authorized.
        await protected_action(client, script)
        await url_mode(client, script)
    else:
        # No session, no completion notifications: each request's flows are its own.
        await modern_url_mode(client, script)
        await modern_protected_action(client, script)


async def run(mode: str, part: str, command: list[str]) -> None:
    print(f"[python mcp {version('mcp')}, mode={mode}, part={part}] {' '.join(command)}")

    async def forms(client: Client, script: Script) -> None:
        if mode != "legacy":
            await rounds_by_hand(client, script)
        await form_mode(client, script)
        await process_data(client, script)

    async def urls(client: Client, script: Script) -> None:
        await url_flows(mode, client, script)

    # A URL instead of a command: the example already listens there (started with --port).
    server: list[str] | str = command[0] if command[0].startswith(("http://", "https://")) else command
    if part == "forms":
        await session(mode, server, "elicitation", forms)
    else:
        await session(mode, server, "url_elicitation", urls)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=[*MODES, "both"], default="both")
    parser.add_argument("--part", choices=["forms", "url"], required=True, help="which example is driven")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="server command and arguments")
    args = parser.parse_args()
    if not args.command:
        parser.error("missing the server command")
    modes = MODES if args.mode == "both" else [args.mode]
    for mode in modes:
        try:
            asyncio.run(run(mode, args.part, args.command))
        except Exception as error:  # any client or transport error is a failed interop run
            for leaf in leaves(error):
                reason = str(leaf) if isinstance(leaf, CheckFailed) else f"{type(leaf).__name__}: {leaf}"
                print(f"FAILED (mode={mode}): {reason}", file=sys.stderr)
            return 1
    print(f"python elicitation client: all {args.part} checks passed ({', '.join(modes)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
