"""Calls a server with the official Python MCP client while OpenTelemetry records its spans.

Usage: python otel_client.py SERVER_COMMAND [ARGS...]

The client runs under an "agent" span, once with the `initialize` handshake and once in the
2026-07-28 era; the Python SDK puts the trace context of its own client span into each request's
`_meta`. The server is started with this process's environment (so that it can export its own
spans). Prints, as one JSON line, every span the Python side recorded.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

from mcp import Client, StdioServerParameters  # noqa: E402  (after the tracer provider is set)


async def call(command: list[str], mode: str) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    with trace.get_tracer("agent").start_as_current_span(f"agent {mode}"):
        async with Client(params, mode=mode, read_timeout_seconds=30.0) as client:
            result = await client.call_tool("echo", {"text": f"traced {mode}"})
            if result.is_error:
                raise SystemExit(f"echo failed in mode {mode}: {result}")


def main() -> None:
    command = sys.argv[1:]
    if not command:
        raise SystemExit(__doc__)
    for mode in ["legacy", "2026-07-28"]:
        asyncio.run(call(command, mode))
    spans = [
        {
            "name": s.name,
            "kind": s.kind.name,
            "trace_id": f"{s.context.trace_id:032x}",
            "span_id": f"{s.context.span_id:016x}",
            "parent": f"{s.parent.span_id:016x}" if s.parent else None,
        }
        for s in exporter.get_finished_spans()
    ]
    print(json.dumps(spans))


if __name__ == "__main__":
    main()
