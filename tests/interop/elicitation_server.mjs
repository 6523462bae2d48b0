// An MCP server written with the official TypeScript SDK whose tools ask the client things:
// form- and URL-mode elicitation, the -32042 error, sampling and roots. Our Rust client drives
// it in tests/tests/interop_client.rs.
//
// Usage: node elicitation_server.mjs            (stdio)
//        node elicitation_server.mjs --http     (Streamable HTTP on a free loopback port; the
//                                                first stdout line is `LISTENING <url>`)
//
// Tools (none takes arguments; each returns one text block):
//   ask_form     form elicitation; returns JSON {action, content} as the client answered
//   ask_url      URL elicitation; on accept, completes the flow (notifications/elicitation/
//                complete) a moment later; returns the action
//   needs_url    fails with -32042 until its flow is complete; the server completes the flow
//                shortly after raising the error, as if the user had finished in the browser
//   bad_schema   sends a form whose schema nests an object; returns the client's error code
//   ask_model    sampling/createMessage; returns "<model>: <text>"
//   ask_roots    roots/list; returns the URIs joined by commas

import { randomUUID } from "node:crypto";
import http from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
  McpError,
  UrlElicitationRequiredError,
} from "@modelcontextprotocol/sdk/types.js";

const FORM_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", title: "Name", minLength: 1 },
    age: { type: "integer", minimum: 0, maximum: 150, default: 30 },
    color: {
      type: "string",
      oneOf: [
        { const: "red", title: "Red" },
        { const: "green", title: "Green" },
      ],
      default: "green",
    },
    subscribe: { type: "boolean", default: false },
    topics: {
      type: "array",
      items: { type: "string", enum: ["news", "sports", "tech"] },
      minItems: 0,
      default: ["tech"],
    },
  },
  required: ["name"],
};

const TOOLS = ["ask_form", "ask_url", "needs_url", "bad_schema", "ask_model", "ask_roots"].map((name) => ({
  name,
  description: `Interop tool ${name}.`,
  inputSchema: { type: "object", properties: {} },
}));

const text = (t) => ({ content: [{ type: "text", text: t }] });

/** A server for one session. */
function createServer() {
  const server = new Server({ name: "ts-elicitation-server", version: "1.0.0" }, { capabilities: { tools: {} } });
  // The flows `needs_url` raised with -32042, and whether each is complete.
  const gates = new Map();

  // Completes a flow a moment from now, as the user's visit to the page would.
  const completeLater = (id) => {
    const notify = server.createElicitationCompletionNotifier(id);
    setTimeout(() => {
      if (gates.has(id)) {
        gates.set(id, true);
      }
      notify().catch((e) => console.error("completion notification failed:", e));
    }, 50);
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const related = { relatedRequestId: extra.requestId };
    switch (request.params.name) {
      case "ask_form": {
        const result = await server.elicitInput(
          { mode: "form", message: "Tell us about you", requestedSchema: FORM_SCHEMA },
          related,
        );
        return text(JSON.stringify({ action: result.action, content: result.content ?? null }));
      }
      case "ask_url": {
        const id = randomUUID();
        const result = await server.elicitInput(
          { mode: "url", message: "Connect your account", url: `https://connect.example.test/flow?id=${id}`, elicitationId: id },
          related,
        );
        if (result.action === "accept") {
          completeLater(id);
        }
        return text(`${result.action} ${id}`);
      }
      case "needs_url": {
        const done = [...gates.values()].some((complete) => complete);
        if (done) {
          return text("needs_url: authorized");
        }
        const id = randomUUID();
        gates.set(id, false);
        completeLater(id);
        throw new UrlElicitationRequiredError(
          [{ mode: "url", message: "Authorize first", url: `https://connect.example.test/flow?id=${id}`, elicitationId: id }],
          "Authorization required",
        );
      }
      case "bad_schema": {
        try {
          await server.request(
            {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: "Nested",
                requestedSchema: { type: "object", properties: { address: { type: "object", properties: {} } } },
              },
            },
            ElicitResultSchema,
            related,
          );
          return text("no error");
        } catch (e) {
          return text(e instanceof McpError ? String(e.code) : `unexpected: ${e}`);
        }
      }
      case "ask_model": {
        const result = await server.createMessage(
          { messages: [{ role: "user", content: { type: "text", text: "What is 2+2?" } }], maxTokens: 10 },
          related,
        );
        const content = Array.isArray(result.content) ? result.content[0] : result.content;
        return text(`${result.model}: ${content.type === "text" ? content.text : content.type}`);
      }
      case "ask_roots": {
        const result = await server.listRoots(undefined, related);
        return text(result.roots.map((r) => r.uri).join(","));
      }
      default:
        throw new McpError(-32602, `unknown tool ${request.params.name}`);
    }
  });
  return server;
}

async function serveStdio() {
  await createServer().connect(new StdioServerTransport());
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}

async function serveHttp() {
  const transports = new Map();
  const httpServer = http.createServer(async (req, res) => {
    try {
      const sessionId = req.headers["mcp-session-id"];
      if (req.method === "POST") {
        const body = JSON.parse(await readBody(req));
        let transport = sessionId ? transports.get(sessionId) : undefined;
        if (!transport && !sessionId && body.method === "initialize") {
          transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (id) => transports.set(id, transport),
          });
          transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
          await createServer().connect(transport);
        }
        if (!transport) {
          res.writeHead(404, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
          return;
        }
        await transport.handleRequest(req, res, body);
      } else {
        const transport = sessionId ? transports.get(sessionId) : undefined;
        if (!transport) {
          res.writeHead(404).end();
          return;
        }
        await transport.handleRequest(req, res);
      }
    } catch (e) {
      console.error("request failed:", e);
      if (!res.headersSent) {
        res.writeHead(500).end();
      }
    }
  });
  httpServer.listen(0, "127.0.0.1", () => {
    const { port } = httpServer.address();
    console.log(`LISTENING http://127.0.0.1:${port}/mcp`);
  });
}

if (process.argv.includes("--http")) {
  await serveHttp();
} else {
  await serveStdio();
}
