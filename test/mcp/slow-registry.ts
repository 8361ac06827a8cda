// A registry module that takes a while to import (as one that loads many workflows does) and leaves nothing open:
// a client polling the port meanwhile must not make the server blame its connection on the module.

import { setup, workflow } from "../../src/index.js";

await new Promise((resolve) => setTimeout(resolve, 1500));

export const registry = setup({ use: { slow: workflow({ run: async () => 1 }) } });
