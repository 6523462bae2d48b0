// Drive the example servers with the TypeScript SDK v2 client (`@modelcontextprotocol/client`),
// in the era the client is told to speak, over stdio or Streamable HTTP.
//
// Usage:
//   node v2_client.mjs ERA PART --http URL
//   node v2_client.mjs ERA PART --stdio SERVER_COMMAND [ARGS...]
//
// ERA is `2025-11-25` (the client's default: the `initialize` handshake) or `2026-07-28`
// (`versionNegotiation: { mode: { pin: "2026-07-28" } }`: `server/discover`, then stateless
// requests; a server's questions come back as `input_required` results that the client answers
// through the same `elicitation/create` handler and retries).
//
// PART is what is checked:
//   quickstart  the `quickstart` example: its tools and their results, an unknown tool;
//   forms       the `elicitation` example: the seed's `create_project` answered with accept
//               (checking the requested schema), decline and cancel; `process_data` with and
//               without its confirmation (`seed.mjs`);
//   combined    the `combined` test server, which serves the same two tools beside the others:
//               the same checks;
//   url         the `url_elicitation` example: `auth_via_url` accepted (the page visited and its
//               button pressed), declined and cancelled; `protected_action` before and after
//               the user went to its page, and refused (decline, cancel).
//
// In the 2026-07-28 era every message the server sends is recorded, and the run fails if any of
// them is the JSON-RPC error -32042 (URL elicitation required), which that revision removed.
//
// Prints one line per check and exits non-zero on the first failure.

import { readFileSync } from "node:fs";
import { Client, ProtocolError, StreamableHTTPClientTransport, UrlElicitationRequiredError } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CheckFailed, check, watchCompletions, errorText, okText, runSession, sameJson, sameMembers, textOf } from "./checks.mjs";
import { seedTools } from "./seed.mjs";

const PARTS = ["quickstart", "forms", "combined", "url"];
const LEGACY = "2025-11-25";
const MODERN = "2026-07-28";
const URL_ELICITATION_REQUIRED = -32042;
const INVALID_PARAMS = -32602;
const MISSING_CAPABILITY = -32021;
/** How long to wait for a notification the server should send at once. */
const NOTIFICATION_WAIT_MS = 10_000;

function sdkVersion() {
  const url = new URL("./node_modules/@modelcontextprotocol/client/package.json", import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")).version;
}

/** Calls `promise`'s function and returns the error it rejects with, failing if it resolves. */
async function rejection(what, call) {
  let result;
  try {
    result = await call();
  } catch (error) {
    return error;
  }
  throw new CheckFailed(`${what}: expected an error, got ${JSON.stringify(result)}`);
}

/**
 * A connected client whose elicitation handler answers from a script: `answer(fn)` queues a
 * function that receives the request's params and returns the ElicitResult; every request is
 * recorded in `requests`. A request with nothing queued is declined and recorded as unexpected.
 */
async function connect(era, target, elicitation, name) {
  const versionNegotiation = era === MODERN ? { mode: { pin: MODERN } } : { mode: "legacy" };
  const client = new Client(
    { name: "interop-typescript-v2", version: "0" },
    { capabilities: elicitation ? { elicitation } : {}, versionNegotiation },
  );

  const requests = [];
  const answers = [];
  const unexpected = [];
  if (elicitation) {
    client.setRequestHandler("elicitation/create", async (request) => {
      requests.push(request.params);
      const next = answers.shift();
      if (next === undefined) {
        unexpected.push(request.params);
        return { action: "decline" };
      }
      return next(request.params);
    });
  }

  const { completed, waitForCompletion } = watchCompletions(client, NOTIFICATION_WAIT_MS);

  const clientErrors = [];
  client.onerror = (error) => clientErrors.push(String(error?.stack ?? error));

  const transport =
    target.kind === "http"
      ? new StreamableHTTPClientTransport(new URL(target.url))
      : new StdioClientTransport({ command: target.command, args: target.args, stderr: "inherit" });
  await client.connect(transport);

  // Everything the server sends from here on, as the transport hands it to the client.
  const received = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    received.push(message);
    deliver?.call(transport, message, extra);
  };

  check(client.getNegotiatedProtocolVersion() === era, `negotiated ${era}`, client.getNegotiatedProtocolVersion());
  check(client.getProtocolEra() === (era === MODERN ? "modern" : "legacy"), `the era is ${client.getProtocolEra()}`);
  check(client.getServerVersion()?.name === name, `server name is ${name}`, client.getServerVersion());
  if (target.kind === "http") {
    const session = transport.sessionId;
    if (era === MODERN) {
      check(session === undefined, "no session id in 2026-07-28", session);
    } else {
      check(typeof session === "string" && session.length >= 32, "the server assigned a session id", session);
    }
  }

  const answer = (fn) => answers.push(fn);
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
  return { era, client, transport, requests, answer, call, completed, waitForCompletion, verify };
}

async function quickstart(session) {
  const { client, call } = session;
  console.log("quickstart: tools");
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
  check(sameMembers(Object.keys(byName), ["add", "echo", "text_stats"]), "tools are add, echo, text_stats", Object.keys(byName));
  for (const [tool, fields] of Object.entries({ add: ["a", "b"], echo: ["text"], text_stats: ["text"] })) {
    const schema = byName[tool].inputSchema;
    check(schema.type === "object" && sameMembers(schema.required ?? [], fields), `${tool} requires ${fields.join(", ")}`, schema);
  }
  check(byName.text_stats.outputSchema?.type === "object", "text_stats has an outputSchema", byName.text_stats.outputSchema);
  check(okText(await call("add", { a: 2, b: 3 })) === "5", 'add(2, 3) returns "5"');
  check(okText(await call("echo", { text: "hello" })) === "hello", 'echo("hello") returns "hello"');
  const stats = await call("text_stats", { text: "one two\nthree" });
  check(!stats.isError, "text_stats is not an error", stats);
  check(sameJson(stats.structuredContent, { characters: 13, words: 3, lines: 2 }), "text_stats structuredContent", stats.structuredContent);
  const invalid = errorText(await call("add", { a: "two", b: 1 }));
  check(invalid.includes("`a`"), "an argument of the wrong type is a tool error naming it", invalid);
  const unknown = await rejection("unknown tool", () => call("no_such_tool"));
  check(unknown instanceof ProtocolError && unknown.code === INVALID_PARAMS, `unknown tool fails with ${INVALID_PARAMS}`, String(unknown));
  check(unknown.message.includes("no_such_tool"), "the error names the tool", unknown.message);
  if (session.era === LEGACY) {
    await client.ping();
    console.log("  ok: ping answered");
  }
}

/** Checks a URL of the example's page and returns the flow id it carries. */
function pageFlow(url) {
  const parsed = new URL(url);
  check(parsed.protocol === "http:" && parsed.hostname === "127.0.0.1" && parsed.pathname === "/auth", "the URL is the example's /auth page", url);
  const id = parsed.searchParams.get("id");
  check(typeof id === "string" && id.length > 0, "the URL carries a flow id", url);
  return id;
}

// Opens the page as a person would and presses its button (a POST of the flow's id). Returns
// the POST's status, or the page's when it shows no button.
async function visit(url) {
  const page = await fetch(url);
  const html = await page.text();
  if (page.status !== 200) return page.status;
  check(/<form[^>]*method="post"/i.test(html), "the page asks for a button press", html);
  // The page's one-time token goes back as a browser sends it: the cookie and the form's field.
  const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0];
  const csrf = (html.match(/name="csrf" value="([^"]*)"/) ?? [])[1] ?? "";
  const pressed = await fetch(new URL("/auth", url), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ id: new URL(url).searchParams.get("id"), csrf }),
  });
  await pressed.text();
  return pressed.status;
}

/** An answer that checks a URL-mode request, has the user go to the page, then accepts. */
function visiting(statuses) {
  return async (params) => {
    check(params.mode === "url", 'the request has mode "url"', params);
    statuses.push(await visit(params.url));
    return { action: "accept" };
  };
}

async function urlLegacy(session) {
  const { requests, answer, call, completed, waitForCompletion } = session;
  console.log("url (2025-11-25): protected_action");
  let asked = requests.length;
  const error = await rejection("protected_action before authorization", () => call("protected_action"));
  check(error instanceof UrlElicitationRequiredError, "protected_action fails with UrlElicitationRequiredError", String(error));
  check(error.code === URL_ELICITATION_REQUIRED, `the error code is ${URL_ELICITATION_REQUIRED}`, error.code);
  check(requests.length === asked, "no elicitation request came with the error", requests.length - asked);
  check(error.elicitations.length === 1 && error.elicitations[0].mode === "url", "the error lists one URL elicitation", error.data);
  const required = error.elicitations[0];
  check(pageFlow(required.url) === required.elicitationId, "the page is for the listed elicitation");
  check((await visit(required.url)) === 200, "pressing the page's button answers 200");
  await waitForCompletion(required.elicitationId);
  console.log("  ok: notifications/elicitation/complete arrived for that id");
  let text = okText(await call("protected_action"));
  check(text === "Protected action completed: you are authorized.", "protected_action succeeds after the flow", text);

  console.log("url (2025-11-25): auth_via_url");
  asked = requests.length;
  answer(() => ({ action: "accept" }));
  text = okText(await call("auth_via_url"));
  check(requests.length === asked + 1, "auth_via_url sent one elicitation request", requests.length - asked);
  const params = requests.at(-1);
  check(params.mode === "url" && params.requestedSchema === undefined, "a URL-mode request without a schema", params);
  check(pageFlow(params.url) === params.elicitationId, "the page is for the request's elicitationId", params);
  check(text.includes(params.elicitationId) && /started/.test(text), "accept says the flow started, naming it", text);
  check((await visit(params.url)) === 200, "pressing the page's button answers 200");
  await waitForCompletion(params.elicitationId);
  console.log("  ok: notifications/elicitation/complete arrived with the same id");
  check((await visit(params.url)) === 409, "a second visit answers 409");
  await new Promise((resolve) => setTimeout(resolve, 200));
  check(completed.get(params.elicitationId) === 1, "the flow completed exactly once", completed.get(params.elicitationId));

  for (const action of ["decline", "cancel"]) {
    answer(() => ({ action }));
    text = okText(await call("auth_via_url"));
    check(text === `The user declined to authorize (action: ${action}).`, `${action} is reported`, text);
  }
}

async function urlModern(session) {
  const { requests, answer, call } = session;
  console.log("url (2026-07-28): auth_via_url");
  let asked = requests.length;
  let statuses = [];
  answer(visiting(statuses));
  let text = okText(await call("auth_via_url"));
  check(requests.length === asked + 1, "auth_via_url sent one input request", requests.length - asked);
  const params = requests.at(-1);
  check(params.elicitationId === undefined, "a 2026-07-28 URL request carries no elicitationId", params);
  const flow = pageFlow(params.url);
  check(sameJson(statuses, [200]), "the user pressed the page's button (200)", statuses);
  check(text === `Authorization flow ${flow} started: finish it in the browser, then call protected_action.`, "the retried call names the flow", text);
  check((await visit(params.url)) === 409, "a second visit answers 409");
  for (const action of ["decline", "cancel"]) {
    answer(() => ({ action }));
    text = okText(await call("auth_via_url"));
    check(text === `The user declined to authorize (action: ${action}).`, `${action} is reported`, text);
  }

  console.log("url (2026-07-28): protected_action");
  asked = requests.length;
  statuses = [];
  answer(visiting(statuses));
  text = okText(await call("protected_action"));
  check(requests.length === asked + 1, "the authorization became one URL input request", requests.length - asked);
  check(requests.at(-1).message === "Authorize the example app before using this action.", "the request has the tool's message", requests.at(-1).message);
  pageFlow(requests.at(-1).url);
  check(sameJson(statuses, [200]), "the user pressed the page's button (200)", statuses);
  check(text === "Protected action completed: you are authorized.", "the retry succeeded", text);

  // Refused, the flow ends the call with the tool's error as a result: 2026-07-28 has no -32042.
  for (const action of ["decline", "cancel"]) {
    asked = requests.length;
    answer(() => ({ action }));
    let result;
    try {
      result = await call("protected_action");
    } catch (error) {
      throw new CheckFailed(`protected_action after ${action}: expected a tool result with isError, got error ${error?.code} ${error}`);
    }
    check(requests.length === asked + 1, `the ${action}d flow was asked once`, requests.length - asked);
    text = errorText(result);
    check(/authoriz/i.test(text), `${action} ends the call with a tool error about the authorization`, text);
  }
}

// A tool that needs an elicitation mode the client did not declare: in a session the tool says
// so in its result; in 2026-07-28 the server refuses the request with error -32021 (missing
// required client capability), naming the capability.
async function refusedMode(session, tool, mode) {
  const { era, call, requests } = session;
  console.log(`${tool} (${era}): a client without ${mode} mode`);
  if (era === LEGACY) {
    const text = errorText(await call(tool));
    check(new RegExp(mode, "i").test(text) && /not support/i.test(text), `the result says ${mode} mode is not supported`, text);
  } else {
    const error = await rejection(tool, () => call(tool));
    check(error instanceof ProtocolError && error.code === MISSING_CAPABILITY, `the call fails with ${MISSING_CAPABILITY}`, String(error));
    check(error.data?.requiredCapabilities?.elicitation !== undefined, "the error names elicitation as required", error.data);
  }
  check(requests.length === 0, "no elicitation request reached the client", requests);
}

async function withClient(era, target, elicitation, name, scenario) {
  return runSession(await connect(era, target, elicitation, name), scenario);
}

async function run(era, part, target) {
  const where = target.kind === "http" ? target.url : [target.command, ...target.args].join(" ");
  console.log(`[typescript sdk v2 ${sdkVersion()}, ${era}] ${part}: ${where}`);
  const both = { form: {}, url: {} };
  if (part === "quickstart") {
    await withClient(era, target, undefined, "quickstart", quickstart);
  } else if (part === "forms" || part === "combined") {
    await withClient(era, target, both, "elicitation", (session) => seedTools(session, `${part} (${era}): `));
    await withClient(era, target, { url: {} }, "elicitation", (session) => refusedMode(session, "create_project", "form"));
  } else {
    await withClient(era, target, both, "url_elicitation", era === MODERN ? urlModern : urlLegacy);
    await withClient(era, target, { form: {} }, "url_elicitation", (session) => refusedMode(session, "auth_via_url", "url"));
  }
}

function parseArgs(argv) {
  const [era, part, how, ...rest] = argv;
  const usage = `usage: node v2_client.mjs 2025-11-25|2026-07-28 ${PARTS.join("|")} (--http URL | --stdio COMMAND [ARGS...])`;
  if (![LEGACY, MODERN].includes(era) || !PARTS.includes(part)) return { usage };
  if (how === "--http" && rest.length === 1) return { era, part, target: { kind: "http", url: rest[0] } };
  if (how === "--stdio" && rest.length >= 1) return { era, part, target: { kind: "stdio", command: rest[0], args: rest.slice(1) } };
  return { usage };
}

const parsed = parseArgs(process.argv.slice(2));
if (parsed.usage) {
  console.error(parsed.usage);
  process.exit(2);
}
try {
  await run(parsed.era, parsed.part, parsed.target);
  console.log(`typescript v2 client: all ${parsed.part} checks passed (${parsed.era})`);
} catch (error) {
  const reason = error instanceof CheckFailed ? error.message : (error?.stack ?? String(error));
  console.error(`FAILED: ${reason}`);
  process.exit(1);
}
