// The loader hook of loaded-modules.mjs: each ES module's URL, appended as it loads.

import fs from "node:fs";

export async function load(url, context, next) {
  const loaded = await next(url, context);
  fs.appendFileSync(process.env.WAYMARK_LOADED_FILE, `${url}\n`);
  return loaded;
}
