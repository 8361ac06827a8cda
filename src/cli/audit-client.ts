// Who a CLI verb's write is made by, for the audit: the operating-system user and this process's id.

import os from "node:os";
import type { AuditClient } from "../engine/audit-types.js";

/** The CLI as an audit client: `waymark <verb>`, the user running it, and its pid. */
export function cliClient(verb: string): AuditClient {
  let user: string | undefined;
  try {
    user = os.userInfo().username;
  } catch {
    user = process.env.USER ?? process.env.USERNAME;
  }
  return { name: `waymark ${verb}`, ...(user ? { user } : {}), pid: process.pid };
}
