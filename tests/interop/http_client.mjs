// Drive the example servers with the official TypeScript MCP client over Streamable HTTP.
//
// Usage: node http_client.mjs ELICITATION_URL QUICKSTART_URL
//
// Both servers must already be listening (for example `elicitation --port N --url-port 0` and
// `quickstart --port M`, whose endpoints are http://127.0.0.1:N/mcp and http://127.0.0.1:M/mcp).
//
//   1. elicitation: list the tools; answer the form of `create_project` with accept, decline and
//      cancel, each arriving on the call's own SSE stream; go through the URL-mode flow of
//      `auth_via_url`, whose completion notification arrives on the session's GET stream;
//      end the session with DELETE.
//   2. quickstart: list the tools, call `add`, `echo` and `text_stats`, end the session.
//
// Prints one line per check and exits non-zero on the first failure.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitationCompleteNotificationSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const EXPECTED_PROTOCOL = "2025-11-25";
/** How long to wait for something the server should do at once. */
const WAIT_MS = 10_000;

class CheckFailed extends Error {}

function check(condition, what, detail) {
  if (!condition) {
    throw new CheckFailed(detail === undefined ? what : `${what}: got ${JSON.stringify(detail)}`);
  }
  console.log(`  ok: ${what}`);
}

function sameMembers(actual, expected) {
  return JSON.stringify([...actual].sort()) === JSON.stringify([...expected].sort());
}

function textOf(result) {
  check(result.content.length === 1, "result has one content block", result.content);
  check(result.content[0].type === "text", "content block is text", result.content[0]);
  return result.content[0].text;
}

function sdkVersion() {
  const url = new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")).version;
}

function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailed(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Connects a client with `capabilities` to `url` and checks the session it got. */
async function connect(url, name, capabilities) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "interop-typescript-http", version: "0" }, { capabilities });
  await client.connect(transport);
  check(transport.protocolVersion === EXPECTED_PROTOCOL, `negotiated ${EXPECTED_PROTOCOL}`, transport.protocolVersion);
  const session = transport.sessionId;
  check(typeof session === "string" && /^[0-9a-f]{32,}$/.test(session), "the server assigned a random session id", session);
  check(client.getServerVersion()?.name === name, `server name is ${name}`, client.getServerVersion());
  return { client, transport };
}

/** Ends the session with DELETE, then checks the server has forgotten it. */
async function terminate(url, client, transport) {
  const session = transport.sessionId;
  await transport.terminateSession();
  check(transport.sessionId === undefined, "DELETE ended the session");
  await client.close();
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": session,
      "mcp-protocol-version": EXPECTED_PROTOCOL,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  check(response.status === 404, "the ended session answers 404", response.status);
}

async function elicitation(url) {
  console.log(`[typescript sdk ${sdkVersion()}] elicitation server at ${url}`);
  const { client, transport } = await connect(url, "elicitation", { elicitation: { form: {}, url: {} } });

  const { tools } = await client.listTools();
  check(
    sameMembers(
      tools.map((t) => t.name),
      ["create_project", "create_project_from", "process_data", "auth_via_url", "protected_action", "deploy"],
    ),
    "tools are create_project, create_project_from, process_data, auth_via_url, protected_action, deploy",
    tools.map((t) => t.name),
  );

  // Each form request is answered with the next prepared answer; every request is recorded.
  const answers = [];
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    const answer = answers.shift();
    if (answer === undefined) {
      throw new Error(`unexpected elicitation: ${JSON.stringify(request.params)}`);
    }
    return typeof answer === "function" ? answer(request.params) : answer;
  });

  answers.push({ action: "accept", content: { projectName: "demo", framework: "vue", includeTests: false } });
  const accepted = await client.callTool({ name: "create_project", arguments: {} });
  check(!accepted.isError, "accepted create_project is not an error", accepted);
  check(textOf(accepted) === "Created project 'demo' with framework: vue", "accept creates the project", accepted);
  check(asked.length === 1, "one elicitation was asked", asked);
  const form = asked[0];
  check(form.message === "Please provide the project details.", "the form's message", form.message);
  check(form.mode === undefined || form.mode === "form", "the request is a form", form.mode);
  check(
    sameMembers(Object.keys(form.requestedSchema.properties), ["projectName", "framework", "includeTests"]),
    "the form asks for projectName, framework, includeTests",
    form.requestedSchema,
  );
  check(sameMembers(form.requestedSchema.required ?? [], ["projectName"]), "only projectName is required", form.requestedSchema);

  answers.push({ action: "decline" });
  const declined = await client.callTool({ name: "create_project", arguments: {} });
  check(!declined.isError, "declined create_project is not an error", declined);
  check(textOf(declined).includes("declined"), "decline creates nothing", declined);

  answers.push({ action: "cancel" });
  const cancelled = await client.callTool({ name: "create_project", arguments: {} });
  check(cancelled.isError === true, "cancelled create_project is a tool error", cancelled);
  check(textOf(cancelled) === "Project creation cancelled by the user.", "cancel is reported", cancelled);

  answers.push({ action: "accept", content: { proceed: true } });
  const processed = await client.callTool({ name: "process_data", arguments: { data: "x".repeat(150) } });
  check(textOf(processed) === "Processed 150 characters", "process_data asked first, then processed", processed);
  check(asked.length === 4, "four elicitations in all", asked.length);

  // URL mode: the completion is not tied to any request, so it comes on the GET stream.
  let completed;
  const completion = new Promise((resolve) => {
    completed = resolve;
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => completed(n.params.elicitationId));
  answers.push((params) => {
    check(params.mode === "url", "auth_via_url asks in URL mode", params);
    return { action: "accept" };
  });
  const started = await client.callTool({ name: "auth_via_url", arguments: {} });
  check(!started.isError, "auth_via_url is not an error", started);
  const flow = asked[4];
  check(textOf(started).includes(flow.elicitationId), "the flow id is reported", started);
  const page = await fetch(flow.url);
  check(page.status === 200, "the authorization page answers 200", page.status);
  const html = await page.text();
  check(/<form[^>]*method="post"/i.test(html), "the page asks for a button press");
  // The page's one-time token goes back as a browser sends it: the cookie and the form's field.
  const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0];
  const csrf = (html.match(/name="csrf" value="([^"]*)"/) ?? [])[1] ?? "";
  const pressed = await fetch(new URL("/auth", flow.url), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ id: flow.elicitationId, csrf }),
  });
  check(pressed.status === 200, "pressing the page's button completes the flow", pressed.status);
  const done = await within(WAIT_MS, "notifications/elicitation/complete", completion);
  check(done === flow.elicitationId, "the completion arrived on the GET stream with the flow's id", done);
  const protectedResult = await client.callTool({ name: "protected_action", arguments: {} });
  check(!protectedResult.isError, "protected_action is allowed after the flow", protectedResult);

  await terminate(url, client, transport);
}

async function quickstart(url) {
  console.log(`[typescript sdk ${sdkVersion()}] quickstart server at ${url}`);
  const { client, transport } = await connect(url, "quickstart", {});
  const { tools } = await client.listTools();
  check(
    sameMembers(
      tools.map((t) => t.name),
      ["add", "echo", "text_stats"],
    ),
    "tools are add, echo, text_stats",
    tools.map((t) => t.name),
  );
  const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
  check(!sum.isError && textOf(sum) === "5", 'add(2, 3) returns "5"', sum);
  const echoed = await client.callTool({ name: "echo", arguments: { text: "hello" } });
  check(textOf(echoed) === "hello", 'echo("hello") returns "hello"', echoed);
  const stats = await client.callTool({ name: "text_stats", arguments: { text: "one two\nthree" } });
  const expected = { characters: 13, words: 3, lines: 2 };
  check(
    JSON.stringify(stats.structuredContent) === JSON.stringify(expected),
    `text_stats structuredContent is ${JSON.stringify(expected)}`,
    stats.structuredContent,
  );
  await client.ping();
  console.log("  ok: ping answered");
  await terminate(url, client, transport);
}

const [elicitationUrl, quickstartUrl] = process.argv.slice(2);
if (!elicitationUrl || !quickstartUrl) {
  console.error("usage: node http_client.mjs ELICITATION_URL QUICKSTART_URL");
  process.exit(2);
}
try {
  await elicitation(elicitationUrl);
  await quickstart(quickstartUrl);
  console.log("typescript client: all checks passed");
} catch (error) {
  const reason = error instanceof CheckFailed ? error.message : (error?.stack ?? String(error));
  console.error(`FAILED: ${reason}`);
  process.exit(1);
}
