// Preload (node --import) that appends every module file the process loads to $WAYMARK_LOADED_FILE, one a
// line: ES modules as the loader hook sees them, CommonJS ones from require's cache as the process exits.

import fs from "node:fs";
import { createRequire, register } from "node:module";

const out = process.env.WAYMARK_LOADED_FILE;
if (out) {
  register(new URL("./loaded-modules-hook.mjs", import.meta.url));
  const require = createRequire(import.meta.url);
  process.on("exit", () => {
    fs.appendFileSync(out, `${Object.keys(require.cache).join("\n")}\n`);
  });
}
