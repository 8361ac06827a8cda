// The temp workspaces `waymark demo` gives its agent run: they live as long as the demo, removed when it
// closes (normal exit, --once, SIGINT/SIGTERM while serving) and on a signal that arrives while seeding.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** The demo's agent workspaces under the system temp folder. */
export class DemoWorkspaces {
  private readonly dirs: string[] = [];
  private readonly onSignal = (sig: NodeJS.Signals) => {
    this.remove();
    process.exit(sig === "SIGINT" ? 130 : 143);
  };

  /** A new empty workspace, /tmp/waymark-demo-agent-XXXX. */
  readonly make = (): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-demo-agent-"));
    this.dirs.push(dir);
    return dir;
  };

  /** Until unguard(): a SIGINT or SIGTERM removes the workspaces and exits (130 or 143). */
  guard(): void {
    process.once("SIGINT", this.onSignal);
    process.once("SIGTERM", this.onSignal);
  }

  unguard(): void {
    process.off("SIGINT", this.onSignal);
    process.off("SIGTERM", this.onSignal);
  }

  /** Removes every workspace made so far. */
  remove(): void {
    for (const dir of this.dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  }
}
