// The page's files (src/inspector/static, copied beside the compiled module by `npm run build`), read once
// and served from memory with an ETag. Only files found at start are served: no path ever reaches the disk.

import { createHash } from "node:crypto";
import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BASE_HEADERS } from "./respond.js";

/** Where the page's files live: next to this module, in src/ (tsx, tests) and in dist/ (built). */
export const STATIC_DIR = fileURLToPath(new URL("./static/", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** The page may load only its own files and talk only to its own server. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export class Assets {
  private readonly files = new Map<string, Asset>();

  constructor(dir = STATIC_DIR) {
    if (!fs.existsSync(dir)) {
      throw new Error(
        `The inspector's page is missing: no directory ${dir}. Run "npm run build" (it copies src/inspector/static next to the compiled code).`,
      );
    }
    for (const name of fs.readdirSync(dir)) {
      const type = TYPES[path.extname(name)];
      if (!type) continue;
      const body = fs.readFileSync(path.join(dir, name));
      const etag = `"${createHash("sha1").update(body).digest("base64url").slice(0, 16)}"`;
      this.files.set(name, { body, type, etag });
    }
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
    if (asset.type.startsWith("text/html")) headers["content-security-policy"] = CSP;
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
