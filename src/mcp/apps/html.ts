// The views' HTML: one self-contained page per view, the browser code (./view, which imports the inspector's
// Preact panels) bundled with esbuild into one inline script, the inspector's styles inline beside it, and a
// Content-Security-Policy that allows only those two inline blocks (by hash): no load, no connection, no
// form target. It carries no token: the view talks only to its host, through postMessage (the App bridge).

import { createHash } from "node:crypto";
import fs from "node:fs";
import { fileURLToPath } from "node:url";

/** The browser code of the views, next to this module (src/ under tsx, dist/ when built). */
const VIEW_DIR = fileURLToPath(new URL("./view/", import.meta.url));
/** The inspector's page, whose styles the views share. */
const INSPECTOR_STATIC = fileURLToPath(new URL("../../inspector/static/", import.meta.url));

let bundled: Promise<{ script: string; style: string }> | undefined;

/** One browser module and what it imports as one script to inline ("</script" escaped). */
export async function bundleScript(entry: string): Promise<string> {
  // esbuild is loaded when a view is first bundled (a view resource read), not when the server starts.
  const { build } = await import("esbuild");
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    logLevel: "silent",
  });
  // "</script" inside a string of the bundle would end the inline block early.
  return out.outputFiles[0]!.text.replaceAll("</script", "<\\/script");
}

async function bundle(): Promise<{ script: string; style: string }> {
  const script = await bundleScript(`${VIEW_DIR}main.js`);
  const style = [
    fs.readFileSync(`${INSPECTOR_STATIC}style.css`, "utf8"),
    fs.readFileSync(`${VIEW_DIR}view.css`, "utf8"),
  ].join("\n");
  return { script, style };
}

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/** The policy of a view's page: its one script and one style block, images only as data: URLs. */
export function viewCsp(script: string, style: string): string {
  return [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    "img-src data:",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

const escapeAttr = (s: string) =>
  s.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");

/** The whole page of one view ("run" or "approvals"); the bundle is built once per process. */
export async function viewHtml(view: string): Promise<string> {
  bundled ??= bundle().catch((err) => {
    bundled = undefined;
    throw err;
  });
  const { script, style } = await bundled;
  return `<!doctype html>
<html lang="en" data-view="${escapeAttr(view)}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(viewCsp(script, style))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Waymark</title>
<style>${style}</style>
</head>
<body>
<main id="main" class="app-view"><p class="muted">Waiting for the tool's answer…</p></main>
<script>${script}</script>
</body>
</html>
`;
}
