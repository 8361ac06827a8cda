// @ts-check
// The view's only link to its server: tool calls through the host (App.callServerTool), so every action has
// the same validation, confirmation and audit as a model's call. An isError answer becomes a thrown Error
// whose message is the answer's text.

/** @typedef {import("@modelcontextprotocol/ext-apps").App} App */
/** @typedef {{ structuredContent?: Record<string, any>, content?: Array<{ type: string, text?: string }>, isError?: boolean }} ToolAnswer */

/** The text of a tool answer, its text blocks joined. */
export function answerText(/** @type {ToolAnswer} */ result) {
  return (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
}

/**
 * Calls one of the server's tools through the host; resolves with the answer, rejects with its text.
 * @param {App} app
 * @param {string} name
 * @param {Record<string, unknown>} args
 * @returns {Promise<ToolAnswer>}
 */
export async function callTool(app, name, args) {
  const result = /** @type {ToolAnswer} */ (await app.callServerTool({ name, arguments: args }));
  if (result.isError) throw new Error(answerText(result) || `${name} failed`);
  return result;
}

/** A random idempotency key for a message sent from the view. */
export function randomKey() {
  const a = new Uint8Array(16);
  crypto.getRandomValues(a);
  return `mcp-app-${Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
