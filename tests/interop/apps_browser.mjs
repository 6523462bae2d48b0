// Drives a real browser through an MCP App: serves the host page of apps_host.mjs (bundled with
// rolldown) next to a proxy to the server under test, opens it in headless Chromium, and works
// the view over the DevTools protocol like a person: waits for the tasks, types a title, clicks
// "Add", clicks a task's "↑". Then it checks the view's content security policy: a fetch from
// the view to an origin the view did not declare, and the same fetch from the host page.
//
// Usage: node apps_browser.mjs <server /mcp URL> <chromium>
// Prints one JSON object (what the host page and the view showed) on stdout; the Rust test
// asserts on it. Exits non-zero, with the reason on stderr, when the browser cannot be driven;
// APPS_BROWSER_TRACE=1 prints each step it waits for on stderr.
import http from "node:http";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { rolldown } from "rolldown";
import WebSocket from "ws";

const [serverUrl, chromium] = process.argv.slice(2);
if (!serverUrl || !chromium) {
  console.error("usage: node apps_browser.mjs <server /mcp URL> <chromium>");
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const deadline = Date.now() + 50_000;
const cleanups = [];

function cleanUp() {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
}

function fail(message) {
  console.error(`apps_browser: ${message}`);
  cleanUp();
  process.exit(1);
}

async function bundleHostPage() {
  const input = path.join(here, "apps_host.mjs");
  const bundle = await rolldown({ input, platform: "browser", cwd: here, logLevel: "warn" });
  const { output } = await bundle.generate({ format: "esm" });
  if (output.length !== 1) throw new Error(`the host page bundled into ${output.length} files, expected one`);
  return output[0].code;
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
}

// An origin the view never declared: counts the requests that reach it.
async function startProbe() {
  const probe = { hits: 0 };
  const server = http.createServer((req, res) => {
    probe.hits += 1;
    res.writeHead(200, { "access-control-allow-origin": "*", "content-type": "text/plain" });
    res.end("reached");
  });
  probe.url = `http://127.0.0.1:${await listen(server)}/probe`;
  cleanups.push(() => server.close());
  return probe;
}

// The host page, its script, and `/mcp` forwarded to the server under test (the page's own
// origin, so the server needs no CORS).
async function startHost(script) {
  const target = new URL(serverUrl);
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>MCP Apps host</title></head>
<body data-phase="loading"><h1>MCP Apps host</h1><div id="app"></div><h2>Calls from the view</h2><ol id="calls"></ol>
<script type="module" src="/host.js"></script></body></html>`;
  const server = http.createServer((req, res) => {
    if (req.url === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(page);
    } else if (req.url === "/host.js") {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" });
      res.end(script);
    } else if (req.url.startsWith("/mcp")) {
      const headers = { ...req.headers, host: target.host };
      delete headers.origin;
      delete headers.referer;
      const forward = http.request(
        { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers },
        (answer) => {
          res.writeHead(answer.statusCode, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on("error", (e) => {
        res.writeHead(502);
        res.end(String(e));
      });
      req.pipe(forward);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  const port = await listen(server);
  cleanups.push(() => server.close());
  return `http://127.0.0.1:${port}/`;
}

function launchChromium() {
  const profile = mkdtempSync(path.join(tmpdir(), "apps-browser-"));
  const args = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--remote-debugging-port=0",
    `--user-data-dir=${profile}`,
    "about:blank",
  ];
  const child = spawn(chromium, args, { stdio: ["ignore", "ignore", "pipe"] });
  cleanups.push(() => {
    child.kill("SIGKILL");
    // Chromium's helper processes may still be writing to the profile as it goes: retry, and
    // never let a leftover temporary directory fail the run.
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch (error) {
      process.stderr.write(`left ${profile} behind: ${error.message}\n`);
    }
  });
  return new Promise((resolve, reject) => {
    let log = "";
    child.on("error", (e) => reject(new Error(`cannot start ${chromium}: ${e.message}`)));
    child.on("exit", (code) => reject(new Error(`${chromium} exited (${code}) before it was ready:\n${log}`)));
    child.stderr.on("data", (chunk) => {
      log += chunk;
      const found = /DevTools listening on (ws:\/\/\S+)/.exec(log);
      if (found) resolve(found[1]);
    });
  });
}

// A DevTools protocol connection with flat sessions.
class Cdp {
  constructor(ws) {
    this.ws = ws;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = [];
    ws.on("message", (data) => {
      const message = JSON.parse(data);
      if (message.id !== undefined) {
        const waiter = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (!waiter) return;
        if (message.error) waiter.reject(new Error(`${waiter.method}: ${message.error.message}`));
        else waiter.resolve(message.result);
      } else {
        for (const listener of this.listeners) listener(message);
      }
    });
  }

  static connect(url) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      ws.on("open", () => resolve(new Cdp(ws)));
      ws.on("error", reject);
    });
  }

  send(method, params = {}, sessionId) {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ id, method, params, sessionId }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, method }));
  }

  on(listener) {
    this.listeners.push(listener);
  }
}

let describe = async () => "";

async function until(what, check) {
  if (process.env.APPS_BROWSER_TRACE) console.error(`waiting for ${what}`);
  while (Date.now() < deadline) {
    const value = await check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}; ${await describe().catch((e) => String(e))}`);
}

async function main() {
  const [script, probe] = await Promise.all([bundleHostPage(), startProbe()]);
  const hostUrl = await startHost(script);
  const browserUrl = await launchChromium();
  const cdp = await Cdp.connect(browserUrl);
  cleanups.push(() => cdp.ws.close());

  // Sessions of out-of-process frames, and the default execution context of each frame, as
  // the browser reports them.
  const frameSessions = new Map();
  const contexts = new Map();
  cdp.on((message) => {
    if (message.method === "Target.attachedToTarget" && message.params.targetInfo.type === "iframe") {
      const sessionId = message.params.sessionId;
      frameSessions.set(message.params.targetInfo.targetId, sessionId);
      cdp.send("Runtime.enable", {}, sessionId).catch(() => {});
    } else if (message.method === "Runtime.executionContextCreated") {
      const { id, auxData } = message.params.context;
      if (auxData && auxData.isDefault) contexts.set(auxData.frameId, { sessionId: message.sessionId, contextId: id });
    }
  });
  const { targetId } = await cdp.send("Target.createTarget", { url: "about:blank" });
  const { sessionId: page } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
  await cdp.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: false, flatten: true }, page);
  await cdp.send("Runtime.enable", {}, page);
  await cdp.send("Page.enable", {}, page);
  await cdp.send("Page.navigate", { url: hostUrl }, page);

  const evaluate = async (where, expression) => {
    const params = { expression, awaitPromise: true, returnByValue: true };
    if (where.contextId !== undefined) params.contextId = where.contextId;
    const { result, exceptionDetails } = await cdp.send("Runtime.evaluate", params, where.sessionId);
    if (exceptionDetails) {
      throw new Error(`${expression}: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
    }
    return result.value;
  };
  const onPage = (expression) => evaluate({ sessionId: page }, expression);

  const phase = await until("the host page to render the view", async () => {
    const p = await onPage("document.body && document.body.dataset.phase");
    return p === "ready" || p === "failed" ? p : null;
  });
  if (phase === "failed") {
    throw new Error(`the host page failed: ${JSON.stringify(await onPage("window.hostReport.errors"))}`);
  }

  // The view's frame: an out-of-process frame has a session of its own; otherwise its default
  // context lives in the page's session.
  // (The page's frame tree lists in-process frames only.)
  const frameId = await until("the view's frame", async () => {
    const { frameTree } = await cdp.send("Page.getFrameTree", {}, page);
    return frameTree.childFrames?.[0]?.frame.id ?? [...frameSessions.keys()][0];
  });
  const view = await until("the view's document", async () => {
    const sessionId = frameSessions.get(frameId);
    if (sessionId) {
      const ready = await evaluate({ sessionId }, "document.readyState").catch(() => null);
      return ready === "complete" ? { sessionId } : null;
    }
    return contexts.get(frameId) ?? null;
  });
  const inView = (expression) => evaluate(view, expression);
  describe = async () =>
    JSON.stringify({
      view: await inView("({ status: document.getElementById('status').textContent, tasks: document.getElementById('tasks').textContent })"),
      host: await onPage("window.hostReport"),
    });
  const titles = () => inView("[...document.querySelectorAll('#tasks li .title')].map((e) => e.textContent)");

  // Clicks the element `selector` of the view as a person would: a mouse press and release at
  // its centre, in the page's coordinates.
  const click = async (selector) => {
    const frame = await onPage(
      "(() => { const r = document.getElementById('view').getBoundingClientRect(); return { x: r.x + 1, y: r.y + 1 }; })()",
    );
    const box = await inView(
      `(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect(); return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`,
    );
    const at = { x: frame.x + box.x, y: frame.y + box.y, button: "left", clickCount: 1 };
    await cdp.send("Input.dispatchMouseEvent", { type: "mouseMoved", ...at }, page);
    await cdp.send("Input.dispatchMouseEvent", { type: "mousePressed", ...at }, page);
    await cdp.send("Input.dispatchMouseEvent", { type: "mouseReleased", ...at }, page);
  };

  const shown = await until("the view to list the tasks", async () => {
    const t = await titles();
    return t.length > 0 ? t : null;
  });

  await inView("document.getElementById('title').value = 'Try the view in Chromium'");
  await click("#add-button");
  const afterAdd = await until("the added task in the view", async () => {
    const t = await titles();
    return t.length === shown.length + 1 ? t : null;
  });

  await click('#tasks li:last-child button[aria-label$=" up"]');
  const afterMove = await until("the reordered view", async () => {
    const t = await titles();
    return t[t.length - 1] !== afterAdd[afterAdd.length - 1] ? t : null;
  });
  const status = await inView("document.getElementById('status').textContent");
  const calls = await until("two calls in the host page's log", async () => {
    const c = await onPage("[...document.querySelectorAll('#calls li')].map((e) => e.textContent)");
    return c.length >= 2 ? c : null;
  });

  // The policy: the view may connect nowhere; the host page may.
  const fetchFrom = (where) =>
    evaluate(
      where,
      `fetch(${JSON.stringify(probe.url)}, { mode: "no-cors" }).then(() => "reached", (e) => "blocked: " + e.message)`,
    );
  const hitsBefore = probe.hits;
  const viewFetch = await fetchFrom(view);
  const hitsAfterView = probe.hits;
  const hostFetch = await fetchFrom({ sessionId: page });
  const report = await onPage("window.hostReport");

  process.stdout.write(
    `${JSON.stringify({
      report,
      shown,
      afterAdd,
      afterMove,
      status,
      calls,
      viewFetch,
      hostFetch,
      probeHitsFromView: hitsAfterView - hitsBefore,
      probeHitsFromHost: probe.hits - hitsAfterView,
      viewOutOfProcess: view.contextId === undefined,
    })}\n`,
  );
}

const timer = setTimeout(() => fail("took longer than 60 seconds"), 60_000);
main().then(
  () => {
    clearTimeout(timer);
    cleanUp();
    process.exit(0);
  },
  (error) => fail(error && error.stack ? error.stack : String(error)),
);
