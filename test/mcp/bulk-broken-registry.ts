// The bulk invoices before the fix, for `waymark mcp --registry`.
export { broken as registry } from "../engine/bulk-invoices.js";
