// Drive the elicitation examples with the official TypeScript MCP client over stdio, or over
// Streamable HTTP when given the URL of an example started with `--port`.
//
// Usage: node elicitation_client.mjs forms|url SERVER_COMMAND [ARGS...]
//        node elicitation_client.mjs forms|url http://127.0.0.1:PORT/mcp
//
// `forms` drives the `elicitation` example, with three connections (over stdio, each to a fresh
// server process):
//   1. a client declaring form and URL elicitation answers the seed's form and confirmation
//      (accept, decline, cancel) and checks the requested schemas and the exact answers
//      (`seed.mjs`);
//   2. a client declaring form mode only (with `applyDefaults`) gets its forms as well;
//   3. a client declaring URL mode only calls `create_project` and must be told that form mode
//      is not supported, without any elicitation request reaching it.
// `url` drives the `url_elicitation` example, with two connections:
//   1. a client declaring form and URL elicitation goes through both URL-mode flows: the
//      -32042 error of `protected_action` and the `auth_via_url` request, visiting each URL
//      with fetch and waiting for `notifications/elicitation/complete`;
//   2. a client declaring form mode only calls `auth_via_url` and must be told that URL mode
//      is not supported, without any elicitation request reaching it.
//
// Prints one line per check and exits non-zero on the first failure.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  UrlElicitationRequiredError,
} from "@modelcontextprotocol/sdk/types.js";
import { CheckFailed, check, errorText, okText, runSession, watchCompletions } from "./checks.mjs";
import { seedTools } from "./seed.mjs";

const EXPECTED_PROTOCOL = "2025-11-25";
const URL_ELICITATION_REQUIRED = -32042;
/** How long to wait for a notification the server should send at once. */
const NOTIFICATION_WAIT_MS = 10_000;

function sdkVersion() {
  const url = new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")).version;
}

/**
 * A connected client whose elicitation handler answers from a script: `answer(fn)` queues a
 * function that receives the request's params and returns the ElicitResult; every request is
 * recorded in `requests`. A request with nothing queued is declined and recorded as unexpected.
 */
async function connect(command, args, elicitation, name) {
  // A URL instead of a command: the server is already listening there (started with --port).
  const transport = /^https?:\/\//.test(command)
    ? new StreamableHTTPClientTransport(new URL(command))
    : new StdioClientTransport({ command, args, stderr: "inherit" });
  let negotiated;
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    negotiated = version;
    setProtocolVersion?.(version);
  };
  const client = new Client({ name: "interop-typescript-elicitation", version: "0" }, { capabilities: { elicitation } });

  const requests = [];
  const answers = [];
  const unexpected = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    requests.push(request.params);
    const next = answers.shift();
    if (next === undefined) {
      unexpected.push(request.params);
      return { action: "decline" };
    }
    return next(request.params);
  });

  // Completion notifications by id; `waitForCompletion` resolves when one arrives (or already has).
  const { completed, waitForCompletion } = watchCompletions(client, NOTIFICATION_WAIT_MS, ElicitationCompleteNotificationSchema);

  // Anything the client could not parse or route (a malformed frame, a notification that fails
  // its schema) lands here; the run fails if something does.
  const clientErrors = [];
  client.onerror = (error) => clientErrors.push(String(error?.stack ?? error));

  await client.connect(transport);
  check(negotiated === EXPECTED_PROTOCOL, `negotiated ${EXPECTED_PROTOCOL}`, negotiated);
  check(client.getServerVersion()?.name === name, `server name is ${name}`, client.getServerVersion());

  const answer = (fn) => answers.push(fn);
  const call = (name, args = {}) => client.callTool({ name, arguments: args });
  // The final checks, after the scenario passed.
  const verify = () => {
    check(unexpected.length === 0, "no unexpected elicitation request arrived", unexpected);
    check(answers.length === 0, "every scripted answer was used", answers.length);
    check(clientErrors.length === 0, "the client reported no protocol errors", clientErrors);
  };
  return { client, requests, answer, call, completed, waitForCompletion, verify };
}

async function formMode(session) {
  const { requests } = session;
  await seedTools(session, "form mode: ");
  check(requests.every((params) => params.mode === "form"), 'every question is in mode "form"', requests.map((params) => params.mode));
}

/** Checks a URL of the example's page for elicitation `id` and returns it parsed. */
function checkPageUrl(url, id) {
  const parsed = new URL(url);
  check(parsed.protocol === "http:" && parsed.hostname === "127.0.0.1" && parsed.pathname === "/auth", "the URL is the example's own /auth page", url);
  check(parsed.searchParams.get("id") === id, "the URL carries the elicitation id", url);
  return parsed;
}

// Opens the page as a person would and presses its button: the page (GET) completes nothing;
// the button POSTs the id back. Returns the status of the POST, or of the page when it shows no
// button (an unknown or finished flow).
async function visit(url) {
  const page = await fetch(url);
  const html = await page.text();
  if (page.status !== 200) return page.status;
  check(/<form[^>]*method="post"/i.test(html), "the page asks for a button press (a POST form)", html);
  const id = new URL(url).searchParams.get("id");
  // The page's one-time token goes back as a browser sends it: the cookie and the form's field.
  const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0];
  const csrf = (html.match(/name="csrf" value="([^"]*)"/) ?? [])[1] ?? "";
  const pressed = await fetch(new URL("/auth", url), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ id, csrf }),
  });
  await pressed.text();
  return pressed.status;
}

// Fetches the page without pressing its button, as a link previewer would, and checks that the
// flow did not complete.
async function previewCompletesNothing(url, id, completed) {
  const page = await fetch(url);
  await page.text();
  check(page.status === 200, "the page answers 200", page.status);
  await new Promise((resolve) => setTimeout(resolve, 200));
  check(!completed.has(id), "opening the page without pressing its button completes nothing");
}

async function urlMode(session) {
  const { requests, answer, call, completed, waitForCompletion } = session;

  console.log("url mode: protected_action");
  let asked = requests.length;
  let error;
  try {
    const result = await call("protected_action");
    throw new CheckFailed(`protected_action before authorization: expected error -32042, got ${JSON.stringify(result)}`);
  } catch (caught) {
    if (caught instanceof CheckFailed) throw caught;
    error = caught;
  }
  check(error instanceof UrlElicitationRequiredError, "protected_action fails with UrlElicitationRequiredError", String(error));
  check(error instanceof McpError && error.code === URL_ELICITATION_REQUIRED, `the error code is ${URL_ELICITATION_REQUIRED}`, error.code);
  check(ErrorCode.UrlElicitationRequired === URL_ELICITATION_REQUIRED, "the SDK names -32042 UrlElicitationRequired");
  check(requests.length === asked, "no elicitation request came with the error", requests.length - asked);
  const { elicitations } = error;
  check(Array.isArray(elicitations) && elicitations.length === 1, "the error lists one elicitation", error.data);
  const required = elicitations[0];
  check(required.mode === "url", 'the listed elicitation has mode "url"', required);
  check(typeof required.elicitationId === "string" && required.elicitationId.length > 0, "it has an elicitationId", required);
  check(typeof required.message === "string" && required.message.length > 0, "it has a message", required);
  checkPageUrl(required.url, required.elicitationId);

  check(!completed.has(required.elicitationId), "no completion before the page is visited");
  await previewCompletesNothing(required.url, required.elicitationId, completed);
  check((await visit(required.url)) === 200, "visiting the URL answers 200");
  await waitForCompletion(required.elicitationId);
  console.log("  ok: notifications/elicitation/complete arrived for that id");

  const text = okText(await call("protected_action"));
  check(/completed/i.test(text), "protected_action succeeds after the flow completed", text);

  console.log("url mode: auth_via_url");
  asked = requests.length;
  answer(() => ({ action: "accept" }));
  let result = okText(await call("auth_via_url"));
  check(requests.length === asked + 1, "auth_via_url sent one elicitation request", requests.length - asked);
  const params = requests.at(-1);
  check(params.mode === "url", 'the request has mode "url"', params.mode);
  check(typeof params.elicitationId === "string" && params.elicitationId.length > 0, "the request has an elicitationId", params);
  check(params.elicitationId !== required.elicitationId, "a new flow has a new id", params.elicitationId);
  check(typeof params.message === "string" && params.message.length > 0, "the request has a message", params);
  check(params.requestedSchema === undefined, "a URL request has no requestedSchema", params);
  checkPageUrl(params.url, params.elicitationId);
  check(/started/i.test(result) && result.includes(params.elicitationId), "accept says the flow started (naming its id)", result);

  check(!completed.has(params.elicitationId), "no completion before the page is visited");
  check((await visit(params.url)) === 200, "visiting the URL answers 200");
  await waitForCompletion(params.elicitationId);
  console.log("  ok: notifications/elicitation/complete arrived with the same elicitationId");
  check((await visit(params.url)) === 409, "a second visit answers 409");
  const unknown = new URL(params.url);
  unknown.searchParams.set("id", "no-such-flow");
  check((await visit(unknown)) === 404, "a visit with an unknown id answers 404");
  // Give a wrongly repeated notification time to arrive before counting.
  await new Promise((resolve) => setTimeout(resolve, 200));
  check(completed.get(params.elicitationId) === 1, "the flow completed exactly once", completed.get(params.elicitationId));

  for (const action of ["decline", "cancel"]) {
    answer(() => ({ action }));
    result = okText(await call("auth_via_url"));
    check(/declined/i.test(result) && result.includes(action), `${action} says the user declined (action: ${action})`, result);
  }
}

async function formOnlyAskedForUrl(session) {
  const { requests, call } = session;
  console.log("form-only client: auth_via_url");
  const text = errorText(await call("auth_via_url"));
  check(/url/i.test(text) && /not support/i.test(text), "the result says URL mode is not supported", text);
  check(requests.length === 0, "no elicitation request reached the client", requests);
}

async function formOnlyAskedForForms(session) {
  const { answer, call } = session;
  console.log("form-only client: create_project");
  answer(() => ({ action: "accept", content: { projectName: "forms", framework: "react" } }));
  const created = okText(await call("create_project"));
  check(created === "Created project 'forms' with framework: react", "form elicitation works", created);
}

async function urlOnly(session) {
  const { requests, call } = session;
  console.log("url-only client: create_project");
  const text = errorText(await call("create_project"));
  check(/form/i.test(text) && /not support/i.test(text), "the result says form mode is not supported", text);
  check(requests.length === 0, "no elicitation request reached the client", requests);
}

/** Connects with `elicitation` capabilities, runs `scenario`, verifies and closes. */
async function withClient(command, args, elicitation, name, scenario) {
  return runSession(await connect(command, args, elicitation, name), scenario);
}

async function run(part, command, args) {
  console.log(`[typescript sdk ${sdkVersion()}] ${part}: ${[command, ...args].join(" ")}`);
  // `applyDefaults` (the client fills schema defaults into accepted content) is a form-mode
  // setting hosts send; the server must take it as form-only support.
  const formsOnly = { form: { applyDefaults: true } };
  if (part === "forms") {
    await withClient(command, args, { form: {}, url: {} }, "elicitation", formMode);
    await withClient(command, args, formsOnly, "elicitation", formOnlyAskedForForms);
    await withClient(command, args, { url: {} }, "elicitation", urlOnly);
  } else {
    await withClient(command, args, { form: {}, url: {} }, "url_elicitation", urlMode);
    await withClient(command, args, formsOnly, "url_elicitation", formOnlyAskedForUrl);
  }
}

const [part, command, ...args] = process.argv.slice(2);
if (!["forms", "url"].includes(part) || !command) {
  console.error("usage: node elicitation_client.mjs forms|url SERVER_COMMAND [ARGS...] | URL");
  process.exit(2);
}
try {
  await run(part, command, args);
  console.log(`typescript elicitation client: all ${part} checks passed`);
} catch (error) {
  const reason = error instanceof CheckFailed ? error.message : error?.stack ?? String(error);
  console.error(`FAILED: ${reason}`);
  process.exit(1);
}
