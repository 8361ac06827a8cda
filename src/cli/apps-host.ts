// `waymark apps-host --url <mcp url> [--port n] [--token-env NAME]`: serves the MCP Apps test host page
// (src/mcp/apps/host.ts) on 127.0.0.1 for a running Waymark server (`waymark demo` prints its MCP URL).

import { parseArgs } from "node:util";
import { startAppsHost } from "../mcp/apps/host.js";
import { verbError } from "./verb-error.js";

const USAGE = `Usage: waymark apps-host --url <mcp url> [--port <n>] [--token-env NAME]

Serves a small MCP Apps host on 127.0.0.1: open the printed address in a browser, pick a tool marked
"(view)" (get_run, diagnose_run, review_approvals), give its arguments as JSON and press Call; the tool's
view is drawn in a sandboxed frame and its buttons act through the host. Start a server first, e.g.
"waymark demo" (it prints "MCP over HTTP: <url>").

  --url <url>         the server's MCP endpoint, e.g. http://127.0.0.1:4000/mcp
  --port <n>          port of the host page (default 0: a free one)
  --token-env NAME    the environment variable holding the server's bearer token, if it needs one
  -h, --help          show this help
`;

/** Runs the host until Ctrl+C; resolves the exit code. */
export async function run(args: string[]): Promise<number> {
  let values: { url?: string; port?: string; "token-env"?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        url: { type: "string" },
        port: { type: "string" },
        "token-env": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (err) {
    verbError(process.stderr, "apps-host", `${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (!values.url) {
    verbError(process.stderr, "apps-host", `--url is required.\n\n${USAGE}`);
    return 2;
  }
  const port = Number(values.port ?? "0");
  const tokenEnv = values["token-env"];
  const token = tokenEnv ? process.env[tokenEnv] : undefined;
  if (tokenEnv && !token) {
    verbError(process.stderr, "apps-host", `--token-env ${tokenEnv}: that variable is empty or unset.`);
    return 2;
  }
  let host: Awaited<ReturnType<typeof startAppsHost>>;
  try {
    host = await startAppsHost({ url: values.url, port, ...(token ? { token } : {}) });
  } catch (err) {
    verbError(process.stderr, "apps-host", `Could not connect to ${values.url}: ${(err as Error).message}`);
    return 1;
  }
  process.stdout.write(`MCP Apps test host: ${host.url}  (open it in a browser; Ctrl+C stops it)\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  await host.close();
  return 0;
}
