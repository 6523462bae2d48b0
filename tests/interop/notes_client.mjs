// Drive the notes example with the official TypeScript MCP client over stdio: resources,
// templates, subscriptions, prompts, completion, logging, sampling and roots.
//
// Usage: node notes_client.mjs SERVER_COMMAND [ARGS...]
//
// Prints one line per check and exits non-zero on the first failure.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const INVALID_PARAMS = -32602;
const RESOURCE_NOT_FOUND = -32002;

class CheckFailed extends Error {}

function check(condition, what, detail) {
  if (!condition) {
    throw new CheckFailed(detail === undefined ? what : `${what}: got ${JSON.stringify(detail)}`);
  }
  console.log(`  ok: ${what}`);
}

function onlyText(result) {
  check(!result.isError, "result is not an error", result);
  check(result.content[0]?.type === "text", "content block is text", result.content);
  return result.content[0].text;
}

async function expectError(promise, code, what) {
  try {
    const result = await promise;
    throw new CheckFailed(`${what}: expected an error, got ${JSON.stringify(result)}`);
  } catch (error) {
    if (error instanceof CheckFailed) throw error;
    check(error instanceof McpError && error.code === code, `${what} fails with JSON-RPC error ${code}`, String(error));
  }
}

async function until(what, found) {
  for (let i = 0; i < 100; i++) {
    if (found()) {
      check(true, what);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new CheckFailed(`${what}: nothing arrived`);
}

function sdkVersion() {
  const url = new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")).version;
}

async function run(command, args) {
  console.log(`[typescript sdk ${sdkVersion()}] ${[command, ...args].join(" ")}`);
  const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
  const client = new Client(
    { name: "interop-typescript-notes", version: "0" },
    { capabilities: { sampling: {}, roots: { listChanged: true } } },
  );
  const logs = [];
  const updates = [];
  const sampled = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    sampled.push(request.params);
    return { role: "assistant", content: { type: "text", text: "A Warm Welcome" }, model: "interop-model" };
  });
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: "file:///home/user/notes", name: "notes" }] }));
  await client.connect(transport);
  try {
    const caps = client.getServerCapabilities();
    check(caps?.resources?.subscribe === true, "server advertises resource subscriptions", caps);
    check(caps?.prompts !== undefined && caps?.completions !== undefined && caps?.logging !== undefined, "prompts, completions, logging", caps);

    const { resources } = await client.listResources();
    check(JSON.stringify(resources.map((r) => r.uri)) === '["notes://index"]', "resources/list shows the index", resources);
    const { resourceTemplates } = await client.listResourceTemplates();
    check(resourceTemplates[0]?.uriTemplate === "notes://{name}", "templates list notes://{name}", resourceTemplates);
    const { contents } = await client.readResource({ uri: "notes://welcome" });
    check(contents.length === 1 && contents[0].mimeType === "text/markdown", "one markdown content", contents);
    check(contents[0].text.includes("Welcome"), "the note is read through the template", contents[0]);
    await expectError(client.readResource({ uri: "notes://missing" }), RESOURCE_NOT_FOUND, "reading a missing note");

    await client.setLoggingLevel("info");
    await client.subscribeResource({ uri: "notes://welcome" });
    const saved = onlyText(await client.callTool({ name: "write_note", arguments: { name: "welcome", text: "# Hi" } }));
    check(saved === "saved `welcome`", "write_note saves", saved);
    await until("a log message arrives", () => logs.some((l) => String(l.data).includes("updated note")));
    await until("the subscribed resource's update arrives", () => updates.includes("notes://welcome"));

    const { prompts } = await client.listPrompts();
    check(prompts.length === 1 && prompts[0].name === "summarize", "prompts/list shows summarize", prompts);
    const got = await client.getPrompt({ name: "summarize", arguments: { name: "welcome" } });
    check(got.messages[0].content.type === "resource", "the note is embedded", got.messages[0]);
    await expectError(client.getPrompt({ name: "summarize", arguments: {} }), INVALID_PARAMS, "a missing argument");

    const done = await client.complete({
      ref: { type: "ref/resource", uri: "notes://{name}" },
      argument: { name: "name", value: "wel" },
    });
    check(JSON.stringify(done.completion.values) === '["welcome"]', "completion of a template variable", done.completion);

    const title = onlyText(await client.callTool({ name: "suggest_title", arguments: { name: "welcome" } }));
    check(title === "interop-model suggests: A Warm Welcome", "sampling goes through the client", title);
    check(sampled.length === 1 && sampled[0].maxTokens === 30, "the sampling request was typed", sampled);
    const roots = onlyText(await client.callTool({ name: "workspaces", arguments: {} }));
    check(roots === "file:///home/user/notes (notes)", "roots come from the client", roots);
  } finally {
    await client.close();
  }
}

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node notes_client.mjs SERVER_COMMAND [ARGS...]");
  process.exit(2);
}
try {
  await run(command, args);
  console.log("typescript client: all checks passed");
} catch (error) {
  console.error(`FAILED: ${error instanceof CheckFailed ? error.message : error?.stack ?? error}`);
  process.exit(1);
}
