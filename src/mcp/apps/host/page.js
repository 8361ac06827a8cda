// @ts-check
// The test host page (served by ../host.ts): lists the server's tools, calls one, and when the tool names an
// MCP Apps view, reads the ui:// resource and renders it in a sandboxed iframe (scripts only: no forms, no
// same origin) joined to the page by the package's AppBridge. The bridge hands the view the tool's input and
// answer and carries the view's tool calls to the server (through the host's /rpc, where the MCP client is).

import {
  AppBridge,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
  PostMessageTransport,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** One request to the server, through the host's MCP client. */
async function rpc(/** @type {string} */ method, /** @type {unknown} */ params) {
  const res = await fetch("rpc", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ method, params }),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
  return body.result;
}

/** Style variables (the spec's names) a host may hand its views; "Styles: sample" sends these. */
const SAMPLE_STYLES = {
  "--color-background-primary": "rgb(255, 248, 231)",
  "--color-text-primary": "rgb(40, 20, 90)",
  "--font-sans": "Georgia, serif",
};

/** @type {Array<any>} */
let tools = [];
/** @type {AppBridge | null} */
let bridge = null;

function hostContext(/** @type {any} */ tool) {
  const theme = /** @type {HTMLSelectElement} */ ($("theme")).value;
  const width = Number(/** @type {HTMLSelectElement} */ ($("width")).value);
  const styles = /** @type {HTMLSelectElement} */ ($("styles")).value;
  return {
    theme: /** @type {"light" | "dark"} */ (theme),
    displayMode: /** @type {const} */ ("inline"),
    availableDisplayModes: /** @type {Array<"inline">} */ (["inline"]),
    containerDimensions: { width, maxHeight: 4000 },
    platform: /** @type {const} */ ("web"),
    ...(styles === "sample" ? { styles: { variables: SAMPLE_STYLES } } : {}),
    ...(tool ? { toolInfo: { tool } } : {}),
  };
}

async function callTool() {
  const name = /** @type {HTMLSelectElement} */ ($("tool")).value;
  const args = JSON.parse(/** @type {HTMLTextAreaElement} */ ($("args")).value || "{}");
  const tool = tools.find((t) => t.name === name);
  const result = await rpc("tools/call", { name, arguments: args });
  $("answer").textContent = (result.content ?? [])
    .filter((/** @type {any} */ c) => c.type === "text")
    .map((/** @type {any} */ c) => c.text)
    .join("\n");
  const uri = tool ? getToolUiResourceUri(tool) : undefined;
  const frameBox = $("frame");
  // (The package's .d.ts files import ./types without an extension, so some of its types do not resolve here.)
  if (bridge) await /** @type {any} */ (bridge).close().catch(() => {});
  bridge = null;
  frameBox.replaceChildren();
  if (!uri) return;
  const read = await rpc("resources/read", { uri });
  const html = read.contents?.[0]?.text;
  if (typeof html !== "string") throw new Error(`${uri} has no HTML`);
  const iframe = document.createElement("iframe");
  // Scripts only: no allow-forms (the views must work without it), no same origin.
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.title = `${name} view`;
  iframe.style.width = `${/** @type {HTMLSelectElement} */ ($("width")).value}px`;
  iframe.style.height = "200px";
  iframe.srcdoc = html;
  frameBox.append(iframe);
  const b = new AppBridge(
    null,
    { name: "waymark-apps-host", version: "0.1.0" },
    { serverTools: {}, serverResources: {}, logging: {} },
    { hostContext: hostContext(tool) },
  );
  b.oncalltool = (params) => rpc("tools/call", params);
  b.onreadresource = (params) => rpc("resources/read", params);
  b.onsizechange = ({ height }) => {
    if (height) iframe.style.height = `${height}px`;
  };
  b.oninitialized = () => {
    b.sendToolInput({ arguments: args });
    b.sendToolResult(result);
    $("status").textContent = `${name}: view ready`;
  };
  bridge = b;
  await b.connect(
    new PostMessageTransport(
      /** @type {Window} */ (iframe.contentWindow),
      /** @type {Window} */ (iframe.contentWindow),
    ),
  );
}

async function start() {
  const listed = await rpc("tools/list", {});
  tools = listed.tools;
  const select = /** @type {HTMLSelectElement} */ ($("tool"));
  for (const t of tools.filter((t) => !isToolVisibilityAppOnly(t))) {
    const option = document.createElement("option");
    option.value = t.name;
    option.textContent = getToolUiResourceUri(t) ? `${t.name} (view)` : t.name;
    select.append(option);
  }
  const params = new URLSearchParams(location.search);
  if (params.get("tool")) select.value = String(params.get("tool"));
  if (params.get("args")) /** @type {HTMLTextAreaElement} */ ($("args")).value = String(params.get("args"));
  for (const id of ["theme", "width", "styles"]) {
    $(id).addEventListener("change", () => {
      const tool = tools.find((t) => t.name === select.value);
      bridge?.setHostContext(hostContext(tool));
      const frame = /** @type {HTMLIFrameElement | null} */ ($("frame").querySelector("iframe"));
      if (frame) frame.style.width = `${/** @type {HTMLSelectElement} */ ($("width")).value}px`;
      document.documentElement.dataset.theme = /** @type {HTMLSelectElement} */ ($("theme")).value;
    });
  }
  $("call").addEventListener("click", () => {
    $("status").textContent = "calling…";
    callTool().catch((err) => {
      $("status").textContent = `Error: ${err.message}`;
    });
  });
  $("status").textContent = `connected: ${tools.length} tools`;
}

start().catch((err) => {
  $("status").textContent = `Error: ${err.message}`;
});
