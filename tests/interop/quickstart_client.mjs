// Drive the quickstart server with the official TypeScript MCP client over stdio.
//
// Usage: node quickstart_client.mjs SERVER_COMMAND [ARGS...]
//
// Prints one line per check and exits non-zero on the first failure.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const EXPECTED_PROTOCOL = "2025-11-25";
const INVALID_PARAMS = -32602;

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

function onlyText(result) {
  check(!result.isError, "result is not an error", result);
  check(result.content.length === 1, "result has one content block", result.content);
  check(result.content[0].type === "text", "content block is text", result.content[0]);
  return result.content[0].text;
}

function sdkVersion() {
  const url = new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")).version;
}

async function run(command, args) {
  console.log(`[typescript sdk ${sdkVersion()}] ${[command, ...args].join(" ")}`);
  const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
  // The client hands the negotiated version to transports that want it; stdio does not, so
  // record it here.
  let negotiated;
  transport.setProtocolVersion = (version) => {
    negotiated = version;
  };
  const client = new Client({ name: "interop-typescript", version: "0" });
  await client.connect(transport);
  try {
    check(negotiated === EXPECTED_PROTOCOL, `negotiated ${EXPECTED_PROTOCOL}`, negotiated);
    check(client.getServerVersion()?.name === "quickstart", "server name is quickstart", client.getServerVersion());
    check(client.getServerCapabilities()?.tools !== undefined, "server advertises tools", client.getServerCapabilities());

    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    check(sameMembers(Object.keys(byName), ["add", "echo", "text_stats"]), "tools are add, echo, text_stats", Object.keys(byName));
    const required = { add: ["a", "b"], echo: ["text"], text_stats: ["text"] };
    for (const [name, fields] of Object.entries(required)) {
      const schema = byName[name].inputSchema;
      check(schema.type === "object", `${name} inputSchema is an object`, schema);
      check(sameMembers(schema.required ?? [], fields), `${name} requires ${fields.join(", ")}`, schema);
    }
    check(byName.text_stats.outputSchema?.type === "object", "text_stats has an outputSchema", byName.text_stats.outputSchema);

    // listTools compiled a validator for the outputSchema; callTool runs it on structuredContent.
    // Prove the validator is live by feeding it a value the schema must reject.
    const validator = client.getToolOutputValidator("text_stats");
    check(typeof validator === "function", "the client holds an outputSchema validator for text_stats");
    check(!validator({ characters: "many" }).valid, "that validator rejects a malformed value");

    check(onlyText(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })) === "5", 'add(2, 3) returns "5"');
    check(onlyText(await client.callTool({ name: "echo", arguments: { text: "hello" } })) === "hello", 'echo("hello") returns "hello"');

    const stats = await client.callTool({ name: "text_stats", arguments: { text: "one two\nthree" } });
    check(!stats.isError, "text_stats is not an error", stats);
    const expected = { characters: 13, words: 3, lines: 2 };
    check(
      JSON.stringify(stats.structuredContent) === JSON.stringify(expected),
      `text_stats structuredContent is ${JSON.stringify(expected)} and passed outputSchema validation`,
      stats.structuredContent,
    );

    let unknown;
    try {
      unknown = await client.callTool({ name: "no_such_tool", arguments: {} });
    } catch (error) {
      check(error instanceof McpError, "unknown tool fails with an MCP error", String(error));
      check(error.code === INVALID_PARAMS, `unknown tool fails with JSON-RPC error ${INVALID_PARAMS}`, error.code);
      check(error.message.includes("no_such_tool"), "the error names the tool", error.message);
    }
    if (unknown !== undefined) {
      throw new CheckFailed(`unknown tool: expected an error, got ${JSON.stringify(unknown)}`);
    }

    await client.ping();
    console.log("  ok: ping answered");
  } finally {
    await client.close();
  }
}

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node quickstart_client.mjs SERVER_COMMAND [ARGS...]");
  process.exit(2);
}
try {
  await run(command, args);
  console.log("typescript client: all checks passed");
} catch (error) {
  const reason = error instanceof CheckFailed ? error.message : error?.stack ?? String(error);
  console.error(`FAILED: ${reason}`);
  process.exit(1);
}
