// The bulk invoices after the fix (version 2 registered), for `waymark mcp --registry`.
export { fixed as registry } from "../engine/bulk-invoices.js";
