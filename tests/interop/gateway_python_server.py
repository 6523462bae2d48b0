"""An MCP server written with the official Python SDK, for the gateway to put behind it.

Usage: python gateway_python_server.py [--legacy-only] [--http]

Over stdio by default; with `--http` it serves Streamable HTTP at `/mcp` on a free loopback port
and prints `LISTENING http://127.0.0.1:PORT/mcp` as its first line. The SDK serves both protocol
eras on either transport: 2025-11-25 (the `initialize` handshake, then a session) and 2026-07-28
(stateless requests). `--legacy-only` (stdio) refuses the 2026-07-28 era, so that a client that
probes for it falls back to the handshake: the same server then speaks 2025-11-25 only.

Tools:
  echo        `text` back, as text and as structured content `{"echo": text}`;
  ask_city    asks the user for a city with a form (`city`, required; `country`, defaulting to
              "France"), through the SDK's `Resolve`/`Elicit`: an `elicitation/create` request in
              a 2025-11-25 session, an `input_required` result in 2026-07-28. Answers
              `city: <city>, <country>` on accept, `no city (<action>)` on decline or cancel;
  era         the protocol version of the request it answers.
"""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Annotated

import anyio
import uvicorn
from pydantic import BaseModel, Field

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server


class City(BaseModel):
    city: str = Field(title="City", min_length=1)
    country: str = Field(default="France", title="Country")


server = MCPServer("python-gateway-peer")


def ask() -> Elicit[City]:
    return Elicit("Which city do you live in?", City)


@server.tool()
def echo(text: str) -> dict[str, str]:
    """Sends the text back."""
    return {"echo": text}


@server.tool()
def ask_city(answer: Annotated[ElicitationResult[City], Resolve(ask)]) -> str:
    """Asks the user for their city."""
    if isinstance(answer, AcceptedElicitation):
        return f"city: {answer.data.city}, {answer.data.country}"
    return f"no city ({answer.action})"


@server.tool()
def era(ctx: Context) -> str:
    """The protocol version of this request."""
    return ctx.protocol_version or "unknown"


async def serve_legacy_stdio() -> None:
    """The handshake era only: a request of the 2026-07-28 era gets an error."""
    low = server._lowlevel_server  # noqa: SLF001  (the SDK serves stdio in both eras otherwise)
    async with stdio_server() as (read_stream, write_stream):
        async with low.lifespan(low) as state:
            await serve_loop(
                low,
                read_stream,
                write_stream,
                lifespan_state=state,
                init_options=low.create_initialization_options(),
            )


def serve_http() -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)  # connections wait in the backlog until uvicorn serves them
    port = listener.getsockname()[1]
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning")
    print(f"LISTENING http://127.0.0.1:{port}/mcp", flush=True)
    uvicorn.Server(config).run(sockets=[listener])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--legacy-only", action="store_true")
    parser.add_argument("--http", action="store_true")
    args = parser.parse_args()
    if args.http:
        serve_http()
    elif args.legacy_only:
        anyio.run(serve_legacy_stdio)
    else:
        server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
