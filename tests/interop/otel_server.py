"""A Python SDK server over stdio that records OpenTelemetry spans (the SDK makes one per request,
continuing the trace context of the request's `_meta`).

Its tool `trace_here` answers with the trace id, span id and parent span id of the span it runs
in, as JSON, so that a client can check that the server's span is a child of its own.
"""

from __future__ import annotations

import json

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

trace.set_tracer_provider(TracerProvider())

from mcp.server.mcpserver import MCPServer  # noqa: E402  (after the tracer provider is set)

server = MCPServer("python-traced")


@server.tool()
def trace_here() -> str:
    """Says which span it runs in."""
    span = trace.get_current_span()
    context = span.get_span_context()
    parent = getattr(span, "parent", None)
    return json.dumps(
        {
            "name": getattr(span, "name", None),
            "trace_id": f"{context.trace_id:032x}",
            "span_id": f"{context.span_id:016x}",
            "parent": f"{parent.span_id:016x}" if parent else None,
        }
    )


if __name__ == "__main__":
    server.run("stdio")
