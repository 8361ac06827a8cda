// A description of the machine the figures come from, for bench/results.md.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { ROOT } from "./common.js";
import { waymarkPragmas } from "./pragmas.js";

function version(pkg: string): string {
  try {
    const file = path.join(ROOT, "node_modules", pkg, "package.json");
    return (JSON.parse(fs.readFileSync(file, "utf8")) as { version: string }).version;
  } catch {
    return "?";
  }
}

function cpuModel(): string {
  try {
    const info = fs.readFileSync("/proc/cpuinfo", "utf8");
    const model = /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim();
    const mhz = /^cpu MHz\s*:\s*([\d.]+)/m.exec(info)?.[1];
    return `${model ?? os.cpus()[0]?.model ?? "?"}${mhz ? ` (${Math.round(Number(mhz))} MHz)` : ""}`;
  } catch {
    return os.cpus()[0]?.model ?? "?";
  }
}

/** The file system and device holding `dir`: `df -T`, and whether the device is rotational. */
function disk(dir: string): string {
  try {
    const line = execFileSync("df", ["-T", "-h", dir], { encoding: "utf8" }).trim().split("\n")[1] ?? "";
    const [dev, type, size] = line.split(/\s+/);
    const name = dev?.replace(/^\/dev\//, "").replace(/\d+$/, "") ?? "";
    let kind = "";
    const rot = `/sys/block/${name}/queue/rotational`;
    if (fs.existsSync(rot))
      kind = fs.readFileSync(rot, "utf8").trim() === "0" ? ", non-rotational" : ", rotational";
    const virtio = fs.existsSync(`/sys/block/${name}/device/vendor`)
      ? ""
      : name.startsWith("vd")
        ? ", virtio (virtual machine)"
        : "";
    return `${dev} ${type}, ${size}${kind}${virtio}`;
  } catch {
    return "?";
  }
}

async function postgres(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    const v = (await client.query("SHOW server_version")).rows[0].server_version as string;
    const sync = (await client.query("SHOW synchronous_commit")).rows[0].synchronous_commit as string;
    const fsync = (await client.query("SHOW fsync")).rows[0].fsync as string;
    const buffers = (await client.query("SHOW shared_buffers")).rows[0].shared_buffers as string;
    return `PostgreSQL ${v} on the same machine (synchronous_commit=${sync}, fsync=${fsync}, shared_buffers=${buffers})`;
  } catch (err) {
    return `PostgreSQL unavailable (${(err as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function describeMachine(
  tmpDir: string,
  pgUrl: string | null,
): Promise<Array<[string, string]>> {
  const db = new Database(":memory:");
  const sqlite = (db.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v;
  db.close();
  const rows: Array<[string, string]> = [
    ["CPU", cpuModel()],
    ["Cores", String(os.cpus().length)],
    ["RAM", `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`],
    ["OS", `${os.type()} ${os.release()} ${os.arch()}`],
    ["Node", process.version],
    ["SQLite", `${sqlite} (better-sqlite3 ${version("better-sqlite3")})`],
    ["Disk (databases)", `${tmpDir}: ${disk(tmpDir)}`],
    [
      "SQLite pragmas",
      `Waymark's, read from a store it opens, also used by the floor and Rivet's SQLite driver: ${waymarkPragmas(
        "normal",
      )
        .map(([k, v]) => `${k}=${k === "synchronous" ? "NORMAL or FULL" : v}`)
        .join(", ")}`,
    ],
    [
      "Peers",
      `@rivetkit/workflow-engine ${version("@rivetkit/workflow-engine")}, @dbos-inc/dbos-sdk ${version("@dbos-inc/dbos-sdk")}`,
    ],
  ];
  if (pgUrl) rows.push(["PostgreSQL", await postgres(pgUrl)]);
  return rows;
}
