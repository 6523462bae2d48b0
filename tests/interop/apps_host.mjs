// A small MCP Apps host, run in the browser (bundled by apps_browser.mjs): the TypeScript SDK's
// client talks to the server (through the page's own origin, `/mcp`), and the official host-side
// bridge of @modelcontextprotocol/ext-apps connects the view to it. The view is rendered in a
// sandboxed iframe whose content security policy the host builds from the view's `_meta.ui.csp`,
// as the extension asks of hosts. What happens is recorded in `window.hostReport` and in the
// page, for the test to read.
import {
  AppBridge,
  PostMessageTransport,
  buildAllowAttribute,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
  isToolVisibilityModelOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const EXTENSION = "io.modelcontextprotocol/ui";
const MIME_TYPE = "text/html;profile=mcp-app";

const report = { calls: [], errors: [] };
window.hostReport = report;

function setPhase(phase) {
  report.phase = phase;
  document.body.dataset.phase = phase;
}

function logCall(name, result) {
  const text = (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  report.calls.push({ name, isError: result.isError === true, text });
  const item = document.createElement("li");
  item.textContent = `${name}: ${text.split("\n")[0]}`;
  document.getElementById("calls").append(item);
}

// The policy of the view's document: nothing beyond what `_meta.ui.csp` declares.
function contentSecurityPolicy(csp = {}) {
  const list = (origins, ...always) => {
    const sources = [...always, ...(origins || [])];
    return sources.length ? sources.join(" ") : "'none'";
  };
  const resources = csp.resourceDomains || [];
  return [
    "default-src 'none'",
    `script-src ${list(resources, "'unsafe-inline'")}`,
    `style-src ${list(resources, "'unsafe-inline'")}`,
    `img-src ${list(resources, "data:")}`,
    `font-src ${list(resources)}`,
    `media-src ${list(resources)}`,
    `connect-src ${list(csp.connectDomains)}`,
    `frame-src ${list(csp.frameDomains)}`,
    `base-uri ${list(csp.baseUriDomains)}`,
  ].join("; ");
}

function withPolicy(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replaceAll('"', "&quot;")}">`;
  return /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (head) => `${head}${meta}`) : meta + html;
}

async function main() {
  const client = new Client(
    { name: "apps-browser-host", version: "1.0.0" },
    { capabilities: { extensions: { [EXTENSION]: { mimeTypes: [MIME_TYPE] } } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  report.serverExtension = client.getServerCapabilities()?.extensions?.[EXTENSION] ?? null;

  const { tools } = await client.listTools();
  report.tools = tools.map((t) => ({ name: t.name, ui: t._meta?.ui ?? null }));
  report.modelTools = tools.filter((t) => !isToolVisibilityAppOnly(t)).map((t) => t.name);

  // The model "calls" the tool with a view; the host shows its result with the view.
  const opener = tools.find((t) => getToolUiResourceUri(t));
  const uri = getToolUiResourceUri(opener);
  report.opener = { name: opener.name, uri };
  const result = await client.callTool({ name: opener.name, arguments: {} });
  report.openerText = result.content.map((c) => c.text).join("\n");

  const { contents } = await client.readResource({ uri });
  const view = contents[0];
  report.view = { mimeType: view.mimeType, meta: view._meta?.ui ?? null };
  const policy = contentSecurityPolicy(view._meta?.ui?.csp);
  report.policy = policy;

  const iframe = document.createElement("iframe");
  iframe.id = "view";
  iframe.title = "App view";
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.setAttribute("allow", buildAllowAttribute(view._meta?.ui?.permissions));
  iframe.style.cssText = "width: 480px; height: 360px; border: 1px solid #888;";
  document.getElementById("app").append(iframe);

  const bridge = new AppBridge(null, { name: "apps-browser-host", version: "1.0.0" }, { serverTools: {} });
  bridge.oncalltool = async (params) => {
    const tool = tools.find((t) => t.name === params.name);
    if (!tool || isToolVisibilityModelOnly(tool)) {
      throw new Error(`the view may not call \`${params.name}\``);
    }
    const answer = await client.callTool(params);
    logCall(params.name, answer);
    return answer;
  };
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: {} });
    await bridge.sendToolResult(result);
    setPhase("ready");
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = withPolicy(view.text, policy);
  setPhase("rendering");
}

main().catch((error) => {
  report.errors.push(String(error && error.stack ? error.stack : error));
  setPhase("failed");
});
