// The skills extension (`io.modelcontextprotocol/skills`) between our SDK and the TypeScript
// SDK v2, both ways.
//
// Usage:
//   node v2_skills.mjs client ERA --stdio SERVER_COMMAND [ARGS...]
//   node v2_skills.mjs client ERA --http URL
//       The SDK's `SkillsClient` (`@modelcontextprotocol/client/ext/skills`) against our `skills`
//       example, in ERA (`2025-11-25`: the `initialize` handshake; `2026-07-28`: pinned with
//       `versionNegotiation`): lists the skills (every page), gets one, reads each one's
//       SKILL.md and files (each verified by the SDK against its digest, size and, for SKILL.md,
//       frontmatter), reads a skill's folder, and asks for a skill that is not served. Prints
//       `all skills checks passed (ERA)` at the end.
//   node v2_skills.mjs server DIR
//       A TypeScript v2 server over stdio serving the skills of DIR (`loadSkills`, the SDK's
//       catalog from a folder), in whichever era each connection opens with.
//
// Prints one line per check and exits non-zero on the first failure.

import { readFileSync } from "node:fs";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { DIRECTORY_MIME_TYPE, SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { loadSkills } from "@modelcontextprotocol/server/ext/skills/node";
import { CheckFailed, check, sameJson } from "./checks.mjs";

const LEGACY = "2025-11-25";
const MODERN = "2026-07-28";
const INVALID_PARAMS = -32602;

/** What the `skills` example serves (examples/skills/). */
const RELEASE_NOTES = "skill://release-notes/SKILL.md";
const CODE_REVIEW = "skill://team/code-review/SKILL.md";

function sdkVersion() {
  const url = new URL("./node_modules/@modelcontextprotocol/client/package.json", import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")).version;
}

async function client(era, target) {
  const versionNegotiation = era === MODERN ? { mode: { pin: MODERN } } : { mode: "legacy" };
  const client = new Client({ name: "interop-typescript-v2-skills", version: "0" }, { versionNegotiation });
  const transport =
    target.kind === "http"
      ? new StreamableHTTPClientTransport(new URL(target.url))
      : new StdioClientTransport({ command: target.command, args: target.args, stderr: "inherit" });
  await client.connect(transport);
  return client;
}

async function checks(era, target) {
  const where = target.kind === "http" ? target.url : [target.command, ...target.args].join(" ");
  console.log(`[typescript sdk v2 ${sdkVersion()}, ${era}] skills: ${where}`);
  const mcp = await client(era, target);
  try {
    const skills = new SkillsClient(mcp);
    check(skills.supported, "the server declares the skills extension");
    check(skills.directoryRead, "the server declares directoryRead");

    const listing = await skills.list();
    const uris = listing.skills.map((s) => s.uri);
    check(sameJson(uris, [RELEASE_NOTES, CODE_REVIEW]), "skills/list lists both skills", JSON.stringify(uris));
    check(listing.invalid.length === 0, "no entry refused", JSON.stringify(listing.invalid));
    if (era === MODERN) {
      check(typeof listing.ttlMs === "number" && typeof listing.cacheScope === "string", "the listing has cache hints");
    }

    const { skill: review } = await skills.get(CODE_REVIEW);
    check(review.frontmatter.name === "code-review", "skills/get returns code-review", JSON.stringify(review));

    for (const entry of listing.skills) {
      const manifest = await skills.read(entry);
      check(manifest.verified, `${entry.uri} is verified`);
      check(manifest.frontmatter?.name === entry.frontmatter.name, `${entry.uri}: its frontmatter matches the entry`);
      check(manifest.body?.trimStart().startsWith("# "), `${entry.uri}: its body follows the frontmatter`, manifest.body);
      for (const file of entry.resources) {
        if (file.uri === entry.uri) continue;
        const read = await skills.read(entry, file.uri);
        check(read.verified && read.bytes.length === file.size, `${file.uri} is read and verified`);
      }
    }

    const notes = listing.skills.find((s) => s.uri === RELEASE_NOTES);
    const style = await skills.read(notes, "references/STYLE.md");
    check(style.text?.startsWith("# Style of an entry"), "a file is read by its path in the skill", style.text);

    const folder = await skills.readDirectory("skill://release-notes");
    const children = folder.resources.map((r) => `${r.name}:${r.mimeType}`).sort();
    const expected = ["SKILL.md:text/markdown", `references:${DIRECTORY_MIME_TYPE}`, `scripts:${DIRECTORY_MIME_TYPE}`];
    check(sameJson(children, expected.sort()), "the skill's folder lists its direct children", JSON.stringify(children));

    let refused;
    try {
      await skills.get("skill://not-served/SKILL.md");
    } catch (error) {
      refused = error;
    }
    check(refused?.code === INVALID_PARAMS, "skills/get of a skill not served is -32602", String(refused));
  } finally {
    await mcp.close();
  }
}

async function serve(dir) {
  const catalog = await loadSkills(dir, { strict: true });
  await serveStdio(() => {
    const server = new McpServer({ name: "ts-v2-skills", version: "2.4.0-interop" }, { capabilities: {} });
    catalog.attach(server);
    return server;
  });
}

const [mode, ...rest] = process.argv.slice(2);
const usage = "usage: node v2_skills.mjs client 2025-11-25|2026-07-28 (--http URL | --stdio COMMAND [ARGS...]) | server DIR";
if (mode === "server" && rest.length === 1) {
  await serve(rest[0]);
} else if (mode === "client" && [LEGACY, MODERN].includes(rest[0]) && rest.length >= 3) {
  const [era, how, ...target] = rest;
  const parsed =
    how === "--http" && target.length === 1
      ? { kind: "http", url: target[0] }
      : how === "--stdio"
        ? { kind: "stdio", command: target[0], args: target.slice(1) }
        : undefined;
  if (!parsed) {
    console.error(usage);
    process.exit(2);
  }
  try {
    await checks(era, parsed);
    console.log(`typescript v2 client: all skills checks passed (${era})`);
  } catch (error) {
    const reason = error instanceof CheckFailed ? error.message : (error?.stack ?? String(error));
    console.error(`FAILED: ${reason}`);
    process.exit(1);
  }
} else {
  console.error(usage);
  process.exit(2);
}
