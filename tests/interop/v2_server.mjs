// A small MCP server written with the TypeScript SDK v2 (`@modelcontextprotocol/server`), for
// our client to talk to. It serves both eras the SDK speaks: 2025-11-25 (the `initialize`
// handshake) and 2026-07-28 (`server/discover`, then stateless requests).
//
// Usage:
//   node v2_server.mjs           stdio (`serveStdio`: each connection's opening picks its era)
//   node v2_server.mjs --http    Streamable HTTP on 127.0.0.1 at a free port, both eras on one
//                                endpoint; prints `LISTENING <url>` first
//
// Over HTTP, as the SDK's migration guide shows for a server that keeps its 2025 sessions: a
// request without the 2026 `_meta` claim (`isLegacyRequest`) goes to a sessionful
// `WebStandardStreamableHTTPServerTransport` (the SDK's own stateless 2025 serving cannot send
// the server's requests, so it could not elicit), everything else to `createMcpHandler` with
// `legacy: "reject"`.
//
// Tools:
//   greet       plain content: `Hello, <name>!`, with structured content `{ greeting }`;
//   ask_color   asks the user for a favourite color with a form (an `input_required` result;
//               to a 2025-11-25 client the SDK sends it as an `elicitation/create` request) and
//               answers `color: <color>` on accept, `no color (<action>)` on decline and
//               cancel, as an error result (`isError: true`) on cancel.

import { createServer } from "node:http";
import { Readable } from "node:stream";
import { randomUUID } from "node:crypto";
import {
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  inputRequired,
  inputResponse,
  isLegacyRequest,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import * as z from "zod";

const COLORS = ["red", "green", "blue"];

function buildServer() {
  const server = new McpServer({ name: "ts-v2-server", version: "2.4.0-interop" }, { capabilities: { tools: {} } });

  server.registerTool(
    "greet",
    {
      description: "Greets someone by name.",
      inputSchema: z.object({ name: z.string().describe("Who to greet.") }),
      outputSchema: z.object({ greeting: z.string() }),
    },
    async ({ name }) => {
      const greeting = `Hello, ${name}!`;
      return { content: [{ type: "text", text: greeting }], structuredContent: { greeting } };
    },
  );

  server.registerTool("ask_color", { description: "Asks the user for a favourite color." }, async (ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, "color");
    if (answer.kind === "missing") {
      return inputRequired({
        inputRequests: {
          color: inputRequired.elicit({
            message: "Which color do you like best?",
            requestedSchema: {
              type: "object",
              properties: {
                color: { type: "string", title: "Color", enum: COLORS },
                shade: { type: "string", title: "Shade", default: "plain" },
              },
              required: ["color"],
            },
          }),
        },
      });
    }
    if (answer.kind !== "elicit") {
      return { content: [{ type: "text", text: `unexpected answer: ${answer.kind}` }], isError: true };
    }
    if (answer.action !== "accept") {
      return { content: [{ type: "text", text: `no color (${answer.action})` }], isError: answer.action === "cancel" };
    }
    const { color, shade } = answer.content ?? {};
    if (!COLORS.includes(color)) {
      return { content: [{ type: "text", text: `not a color: ${JSON.stringify(color)}` }], isError: true };
    }
    return { content: [{ type: "text", text: `color: ${color} (${shade ?? "no shade"})` }] };
  });

  return server;
}

/** A fetch-style handler serving 2025-era sessions and 2026-07-28 requests on one endpoint. */
function bothEras() {
  const onerror = (error) => console.error("v2 server:", error);
  const modern = createMcpHandler(buildServer, { legacy: "reject", onerror });
  const sessions = new Map();
  async function fetch(request) {
    const session = request.headers.get("mcp-session-id");
    if (session !== null) {
      const transport = sessions.get(session);
      return transport ? transport.handleRequest(request) : new Response("unknown session", { status: 404 });
    }
    if (request.method !== "POST") return modern.fetch(request);
    const text = await request.text();
    const again = () => new Request(request.url, { method: "POST", headers: request.headers, body: text });
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      return modern.fetch(again());
    }
    if (!(await isLegacyRequest(again(), body))) return modern.fetch(again());
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, transport),
      onsessionclosed: (id) => sessions.delete(id),
    });
    transport.onerror = onerror;
    await buildServer().connect(transport);
    return transport.handleRequest(again(), { parsedBody: body });
  }
  return { fetch };
}

/** Serves a fetch-style handler on a Node HTTP server. */
function listen(handler) {
  const server = createServer(async (req, res) => {
    try {
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        for (const one of [value].flat()) if (one !== undefined) headers.append(name, one);
      }
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: hasBody ? Readable.toWeb(req) : undefined,
        duplex: hasBody ? "half" : undefined,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, [...response.headers].flat());
      res.flushHeaders();
      if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
      }
      res.end();
    } catch (error) {
      console.error("v2 server: request failed:", error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(0, "127.0.0.1", () => {
    console.log(`LISTENING http://127.0.0.1:${server.address().port}/mcp`);
  });
}

if (process.argv.includes("--http")) {
  listen(bothEras());
} else {
  await serveStdio(buildServer);
}
