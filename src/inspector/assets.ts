// The page's files (src/inspector/static, copied beside the compiled module by `npm run build`) and the
// rendering library it imports (Preact, from node_modules), read once and served from memory with an
// ETag. Only files found at start are served: no path ever reaches the disk.

import { createHash } from "node:crypto";
import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BASE_HEADERS } from "./respond.js";

/** Where the page's files live: next to this module, in src/ (tsx, tests) and in dist/ (built). */
export const STATIC_DIR = fileURLToPath(new URL("./static/", import.meta.url));

/**
 * Modules of packages the page imports, served as /assets/<name>. IMPORTANT: index.html's import map
 * names each bare specifier the page's code imports ("preact", "preact/hooks") and points it here.
 */
const VENDOR: Record<string, string> = {
  "preact.mjs": "preact",
  "preact-hooks.mjs": "preact/hooks",
};

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
};

/**
 * The page may load only its own files and talk only to its own server; the one inline script it runs
 * is its import map, allowed by its hash.
 */
function csp(scriptHashes: string[]): string {
  return [
    "default-src 'none'",
    ["script-src 'self'", ...scriptHashes.map((h) => `'sha256-${h}'`)].join(" "),
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The SHA-256 (base64) of each inline import map in a page, for its Content-Security-Policy. */
export function importMapHashes(html: string): string[] {
  const maps = html.matchAll(/<script type="importmap">([\s\S]*?)<\/script>/g);
  return [...maps].map((m) => createHash("sha256").update(m[1]!).digest("base64"));
}

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export class Assets {
  private readonly files = new Map<string, Asset>();
  private readonly policy: string;

  constructor(dir = STATIC_DIR) {
    if (!fs.existsSync(dir)) {
      throw new Error(
        `The inspector's page is missing: no directory ${dir}. Run "npm run build" (it copies src/inspector/static next to the compiled code).`,
      );
    }
    for (const name of fs.readdirSync(dir)) {
      const type = TYPES[path.extname(name)];
      if (type) this.add(name, fs.readFileSync(path.join(dir, name)), type);
    }
    const require = createRequire(import.meta.url);
    for (const [name, specifier] of Object.entries(VENDOR)) {
      this.add(name, fs.readFileSync(require.resolve(specifier)), TYPES[".mjs"]!);
    }
    const page = this.files.get("index.html")?.body.toString("utf8") ?? "";
    this.policy = csp(importMapHashes(page));
  }

  private add(name: string, body: Buffer, type: string): void {
    const etag = `"${createHash("sha1").update(body).digest("base64url").slice(0, 16)}"`;
    this.files.set(name, { body, type, etag });
  }

  has(name: string): boolean {
    return this.files.has(name);
  }

  /** Sends one file (GET and HEAD), answering 304 when the browser's copy is current. */
  send(req: IncomingMessage, res: ServerResponse, name: string): void {
    const asset = this.files.get(name)!;
    const headers: Record<string, string | number> = {
      ...BASE_HEADERS,
      "cache-control": "no-cache",
      etag: asset.etag,
      "content-type": asset.type,
    };
    if (asset.type.startsWith("text/html")) headers["content-security-policy"] = this.policy;
    if (req.headers["if-none-match"] === asset.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    headers["content-length"] = asset.body.length;
    res.writeHead(200, headers);
    res.end(req.method === "HEAD" ? undefined : asset.body);
  }
}
