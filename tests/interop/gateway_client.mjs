// Drive the gateway (`mcp-gateway`) with the TypeScript SDK v2 client (`@modelcontextprotocol/client`),
// in the era the client is told to speak, over stdio or Streamable HTTP. Behind the gateway are
// three servers of other SDKs, each under its name as prefix: `tsv1_` (the TypeScript SDK v1
// `elicitation_server.mjs`, 2025-11-25 only), `py_` (the Python SDK `gateway_python_server.py`)
// and `tsv2_` (the TypeScript SDK v2 `v2_server.mjs`).
//
// Usage:
//   node gateway_client.mjs ERA --http URL
//   node gateway_client.mjs ERA --stdio GATEWAY_COMMAND [ARGS...]
//
// ERA is `2025-11-25` (the `initialize` handshake) or `2026-07-28` (pinned: stateless requests;
// every question comes back as an `input_required` result, answered through the same
// `elicitation/create` handler, and the call retried).
//
// Checks: tools/list shows each server's tools under its prefix, and nothing else; a form of
// each server answered (the v1 server's is asked with `elicitation/create` upstream, the v2
// server's with `input_required` where the gateway speaks 2026-07-28 to it); structured content
// kept; the v1 server's -32042 flow completed and retried (in 2026-07-28 a URL input request:
// the run fails if the error -32042 or a completion notification reaches that era's wire).
//
// Prints one line per check and exits non-zero on the first failure.

import { readFileSync } from "node:fs";
import { Client, StreamableHTTPClientTransport, UrlElicitationRequiredError } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CheckFailed, check, watchCompletions, errorText, okText, sameJson, sameMembers } from "./checks.mjs";

const LEGACY = "2025-11-25";
const MODERN = "2026-07-28";
const URL_ELICITATION_REQUIRED = -32042;
/** How long to wait for a notification the gateway should pass on at once. */
const NOTIFICATION_WAIT_MS = 10_000;

const TOOLS = [
  ...["ask_form", "ask_url", "needs_url", "bad_schema", "ask_model", "ask_roots"].map((t) => `tsv1_${t}`),
  ...["echo", "ask_city", "era"].map((t) => `py_${t}`),
  ...["greet", "ask_color"].map((t) => `tsv2_${t}`),
];

function sdkVersion() {
  const url = new URL("./node_modules/@modelcontextprotocol/client/package.json", import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")).version;
}

async function connect(era, target) {
  const versionNegotiation = era === MODERN ? { mode: { pin: MODERN } } : { mode: "legacy" };
  const client = new Client(
    { name: "interop-typescript-v2-gateway", version: "0" },
    { capabilities: { elicitation: { form: {}, url: {} } }, versionNegotiation },
  );
  // Each elicitation request is recorded and answered by the next queued answer, or by
  // `fallback` when one is set; with neither it is declined and recorded as unexpected.
  const requests = [];
  const answers = [];
  const unexpected = [];
  const state = { fallback: undefined };
  client.setRequestHandler("elicitation/create", async (request) => {
    requests.push(request.params);
    const next = answers.shift() ?? state.fallback;
    if (next === undefined) {
      unexpected.push(request.params);
      return { action: "decline" };
    }
    return next(request.params);
  });
  const { completed, waitForCompletion } = watchCompletions(client, NOTIFICATION_WAIT_MS);
  const clientErrors = [];
  client.onerror = (error) => clientErrors.push(String(error?.stack ?? error));

  const transport =
    target.kind === "http"
      ? new StreamableHTTPClientTransport(new URL(target.url))
      : new StdioClientTransport({ command: target.command, args: target.args, stderr: "inherit" });
  await client.connect(transport);
  const received = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    received.push(message);
    deliver?.call(transport, message, extra);
  };

  check(client.getNegotiatedProtocolVersion() === era, `negotiated ${era}`, client.getNegotiatedProtocolVersion());
  const call = (tool, args = {}) => client.callTool({ name: tool, arguments: args });
  const verify = () => {
    check(unexpected.length === 0, "no unexpected elicitation request arrived", unexpected);
    check(answers.length === 0, "every scripted answer was used", answers.length);
    check(clientErrors.length === 0, "the client reported no protocol errors", clientErrors);
    if (era === MODERN) {
      const removed = received.filter((m) => m?.error?.code === URL_ELICITATION_REQUIRED);
      check(removed.length === 0, `no error ${URL_ELICITATION_REQUIRED} on the 2026-07-28 wire`, removed);
      check(completed.size === 0, "no notifications/elicitation/complete in 2026-07-28", [...completed.keys()]);
    }
  };
  return { era, client, requests, answer: (fn) => answers.push(fn), state, call, waitForCompletion, verify };
}

async function listing({ client }) {
  console.log("tools/list");
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
  check(sameMembers(Object.keys(byName), TOOLS), "every server's tools, each under its prefix", Object.keys(byName));
  check(byName.tsv2_greet.description === "Greets someone by name.", "the description is kept", byName.tsv2_greet);
  check(sameJson(byName.tsv2_greet.inputSchema.required, ["name"]), "the input schema is kept", byName.tsv2_greet.inputSchema);
  check(byName.tsv2_greet.outputSchema?.properties?.greeting?.type === "string", "the output schema is kept", byName.tsv2_greet);
}

async function plainCalls({ call }) {
  console.log("plain calls");
  const greeting = await call("tsv2_greet", { name: "Ada" });
  check(okText(greeting) === "Hello, Ada!", "tsv2_greet answers", greeting);
  check(sameJson(greeting.structuredContent, { greeting: "Hello, Ada!" }), "its structured content is kept", greeting);
  const echoed = await call("py_echo", { text: "through" });
  check(sameJson(echoed.structuredContent, { echo: "through" }), "py_echo's structured content", echoed);
}

async function forms({ call, answer, requests }) {
  console.log("forms");
  let asked = requests.length;
  const content = { name: "Grace", age: 40, color: "red", subscribe: true, topics: ["news"] };
  answer(() => ({ action: "accept", content }));
  let text = okText(await call("tsv1_ask_form"));
  check(requests.length === asked + 1, "tsv1_ask_form asked once", requests.length - asked);
  const form = requests.at(-1);
  check(form.message === "Tell us about you", "the v1 server's message", form.message);
  const schema = form.requestedSchema;
  check(sameJson(Object.keys(schema.properties), ["name", "age", "color", "subscribe", "topics"]), "its fields, in order", schema);
  check(sameJson(schema.required, ["name"]), "name is required", schema.required);
  check(sameJson(JSON.parse(text), { action: "accept", content }), "the v1 server got the answer", text);
  answer(() => ({ action: "decline" }));
  text = okText(await call("tsv1_ask_form"));
  check(sameJson(JSON.parse(text), { action: "decline", content: null }), "the v1 server got the decline", text);

  asked = requests.length;
  answer(() => ({ action: "accept", content: { city: "Oslo", country: "Norway" } }));
  text = okText(await call("py_ask_city"));
  check(requests.length === asked + 1, "py_ask_city asked once", requests.length - asked);
  check(requests.at(-1).message === "Which city do you live in?", "the Python server's message", requests.at(-1).message);
  check(sameJson(requests.at(-1).requestedSchema.required, ["city"]), "city is required", requests.at(-1).requestedSchema);
  check(text === "city: Oslo, Norway", "the Python server got the answer", text);
  answer(() => ({ action: "decline" }));
  text = okText(await call("py_ask_city"));
  check(text === "no city (decline)", "the Python server got the decline", text);

  asked = requests.length;
  answer(() => ({ action: "accept", content: { color: "blue", shade: "dark" } }));
  text = okText(await call("tsv2_ask_color"));
  check(requests.length === asked + 1, "tsv2_ask_color asked once", requests.length - asked);
  check(requests.at(-1).message === "Which color do you like best?", "the v2 server's message", requests.at(-1).message);
  check(text === "color: blue (dark)", "the v2 server got the answer", text);
  answer(() => ({ action: "cancel" }));
  text = errorText(await call("tsv2_ask_color"));
  check(text === "no color (cancel)", "the v2 server got the cancel", text);
}

const FLOW_URL = "https://connect.example.test/flow?id=";

async function urlRequired(session) {
  const { era, call, requests, state, waitForCompletion } = session;
  console.log(`the -32042 flow (${era})`);
  if (era === LEGACY) {
    let error;
    try {
      const result = await call("tsv1_needs_url");
      throw new CheckFailed(`tsv1_needs_url: expected error ${URL_ELICITATION_REQUIRED}, got ${JSON.stringify(result)}`);
    } catch (e) {
      if (e instanceof CheckFailed) throw e;
      error = e;
    }
    check(error instanceof UrlElicitationRequiredError, "tsv1_needs_url fails with UrlElicitationRequiredError", String(error));
    check(error.elicitations.length === 1 && error.elicitations[0].url.startsWith(FLOW_URL), "it lists the flow", error.data);
    await waitForCompletion(error.elicitations[0].elicitationId);
    console.log("  ok: notifications/elicitation/complete arrived for that id");
    check(okText(await call("tsv1_needs_url")) === "needs_url: authorized", "the retried call succeeds");
  } else {
    // The flow comes as a URL input request; the gateway retries upstream with the answer (and
    // asks again while the upstream still says the flow is not complete).
    const asked = requests.length;
    state.fallback = (params) => {
      check(params.mode === "url" && params.url.startsWith(FLOW_URL), "a URL request for the flow", params);
      return { action: "accept" };
    };
    const text = okText(await call("tsv1_needs_url"));
    state.fallback = undefined;
    check(requests.length > asked, "the flow was offered as a URL input request", requests.length - asked);
    check(requests.at(-1).message === "Authorize first", "with the error's message", requests.at(-1).message);
    check(text === "needs_url: authorized", "the retried call succeeds", text);
  }
}

async function run(era, target) {
  const where = target.kind === "http" ? target.url : [target.command, ...target.args].join(" ");
  console.log(`[typescript sdk v2 ${sdkVersion()}, ${era}] gateway at ${where}`);
  const session = await connect(era, target);
  try {
    await listing(session);
    await plainCalls(session);
    await forms(session);
    await urlRequired(session);
    session.verify();
  } finally {
    await session.client.close();
  }
}

function parseArgs(argv) {
  const [era, how, ...rest] = argv;
  const usage = "usage: node gateway_client.mjs 2025-11-25|2026-07-28 (--http URL | --stdio COMMAND [ARGS...])";
  if (![LEGACY, MODERN].includes(era)) return { usage };
  if (how === "--http" && rest.length === 1) return { era, target: { kind: "http", url: rest[0] } };
  if (how === "--stdio" && rest.length >= 1) return { era, target: { kind: "stdio", command: rest[0], args: rest.slice(1) } };
  return { usage };
}

const parsed = parseArgs(process.argv.slice(2));
if (parsed.usage) {
  console.error(parsed.usage);
  process.exit(2);
}
try {
  await run(parsed.era, parsed.target);
  console.log(`typescript v2 client: all gateway checks passed (${parsed.era})`);
} catch (error) {
  const reason = error instanceof CheckFailed ? error.message : (error?.stack ?? String(error));
  console.error(`FAILED: ${reason}`);
  process.exit(1);
}
