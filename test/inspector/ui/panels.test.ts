// The run view's panels drawn from data alone (no server, no browser: Preact renders them to HTML), as
// another page such as an MCP Apps view would draw them. What a person would read and press is there;
// hostile text stays text; a read-only view offers no action.

import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { describe, expect, test } from "vitest";
import { DiagnosisPanel, pageActions } from "../../../src/inspector/static/diagnosis.js";
import { EntryPanel } from "../../../src/inspector/static/entry.js";
import { MessageForm } from "../../../src/inspector/static/message-form.js";
import { ReplayPreview } from "../../../src/inspector/static/replay-plan.js";
import { defaultEntry } from "../../../src/inspector/static/run.js";
import { RunView, type RunViewActions } from "../../../src/inspector/static/run-view.js";
import { Timeline, WINDOW_AT } from "../../../src/inspector/static/timeline.js";
import { bar, diagnosis, failedEntry, failedHistory, failedRun, T0, waitingRun } from "./fixtures.js";

const none: RunViewActions = {
  select: () => {},
  replay: () => {},
  cancel: () => {},
  send: async () => "",
};

/** How often `needle` occurs in `html`. */
const count = (html: string, needle: string | RegExp) => html.split(needle).length - 1;

/** The text of an HTML string: tags dropped, entities read. */
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");

function failedView(readOnly: boolean, key = "tax-outage") {
  const can = readOnly
    ? { send: false, cancel: false, replay: false }
    : { send: false, cancel: false, replay: true };
  return renderToString(
    h(RunView, {
      run: failedRun(key, can),
      history: failedHistory(),
      selectedId: 2,
      entry: failedEntry(),
      diagnosis: { state: "ready", diagnosis },
      now: T0 + 2_000,
      readOnly,
      actions: none,
    }),
  );
}

describe("the run view from data", () => {
  test("a failed run: why it failed, the diagnosis pointing at the step, every attempt, the state before and after", () => {
    const html = failedView(false);
    const words = text(html);
    expect(words).toContain("calculate-tax threw Error: tax quote failed: 503");
    expect(words).toContain("step-failed at calculate-tax");
    expect(words).toContain("error: tax quote failed: 503 #2 attempt 4");
    // The person's change, then the dry run as a button; the replay itself and waiting are not offered.
    expect(words).toContain("Wait until the tax API is back.");
    expect(count(html, "Preview the replay…")).toBe(1);
    expect(words).not.toContain("wait_for_run {");
    // The timeline: both steps, the failing one with its four failed attempts.
    expect(html).toMatch(/class="tl-main selected"[^>]*data-path="calculate-tax"[^>]*data-status="failed"/);
    expect(count(html, "tl-attempt at-failed")).toBe(4);
    // The entry panel: the attempts table and the state change.
    expect(count(html, /<tr class="at-row-failed"/g)).toBe(4);
    expect(html).toMatch(/<tr class="d-added"><td class="mono">\/tax<\/td>/);
    expect(words).toContain("Replay…");
    expect(words).toContain("Replay from this entry…");
  });

  test("read-only: no replay or cancel button anywhere, the header says so", () => {
    const html = failedView(true);
    expect(text(html)).toContain("read-only: actions are off");
    expect(html).not.toContain("Replay…");
    expect(html).not.toContain("Replay from this entry…");
    expect(html).toMatch(/<button type="button" disabled>Preview the replay…/);
  });

  test("a hostile run key and error text render as text, never as markup", () => {
    const key = '<img src=x onerror="alert(1)">';
    const html = failedView(false, key);
    expect(html).not.toContain("<img");
    expect(text(html)).toContain(key);
  });

  test("a waiting approval: the form from the queue's schema, with Approve and Reject, and no other queue to offer", () => {
    const html = renderToString(
      h(RunView, {
        run: waitingRun(),
        history: {
          entries: [
            bar(1, "await-decision", {
              kind: "queue",
              status: "waiting",
              endedAt: null,
              attempts: [],
              detail: { queue: "decisions" },
            }),
          ],
          truncated: false,
          serverNow: T0,
        },
        selectedId: null,
        entry: null,
        diagnosis: null,
        now: T0 + 2_000,
        readOnly: false,
        actions: none,
      }),
    );
    expect(text(html)).toContain("Waiting for a message on decisions");
    expect(html).toMatch(
      /<form class="message-form" aria-label="Message to queue decisions" data-queue="decisions">/,
    );
    expect(html).toMatch(/<input [^>]*data-field="by"/);
    expect(count(html, ">Approve</button>")).toBe(1);
    expect(count(html, ">Reject</button>")).toBe(1);
    expect(html).not.toContain("Send to another queue");
    expect(text(html)).toContain("Choose an entry in the timeline to see it whole.");
  });
});

describe("panels", () => {
  test("a message form gives its controls no name (a control's name would hide the form's own members), only data-field paths", () => {
    const schema = JSON.parse(
      '{"type":"object","properties":{"addEventListener":{"type":"string"},"__proto__":{"type":"string"},"nested":{"type":"object","properties":{"submit":{"type":"string"}}}}}',
    );
    const html = renderToString(h(MessageForm, { queue: "q", schema, onSend: async () => "" }));
    const form = /<form [^>]*>([\s\S]*)<\/form>/.exec(html)?.[1] ?? "";
    expect(form).not.toMatch(/\sname=/);
    for (const field of ["addEventListener", "__proto__", "nested", "nested/submit"])
      expect(form).toContain(`data-field="${field}"`);
    // Ids carry a prefix no member of a form has; each label names its control.
    const ids = [...form.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!);
    expect(ids).toHaveLength(3);
    for (const id of ids) {
      expect(id).toMatch(/^f\d+-/);
      expect(form).toContain(`for="${id}"`);
    }
    expect(form).toContain(">Send to q</button>");
  });

  test("the diagnosis while it is worked out, and when it could not be", () => {
    const props = { onSelect: () => {}, onReplay: () => {}, canReplay: true };
    expect(text(renderToString(h(DiagnosisPanel, { ...props, diagnosis: { state: "loading" } })))).toContain(
      "Diagnosing…",
    );
    expect(
      text(
        renderToString(h(DiagnosisPanel, { ...props, diagnosis: { state: "error", message: "no module" } })),
      ),
    ).toContain("no module");
    expect(pageActions(diagnosis).map((a) => (a.kind === "call" ? a.tool : a.kind))).toEqual([
      "person",
      "replay_run",
    ]);
  });

  test("a replay's preview: where it starts, what it discards, the steps that run again, the messages it puts back", () => {
    const html = renderToString(
      h(ReplayPreview, {
        plan: {
          run: "invoiceActor/tax-outage",
          from: { id: 2, path: "calculate-tax" },
          discard: [
            { id: 2, path: "calculate-tax", kind: "step", status: "failed" },
            { id: 3, path: "save-invoice", kind: "step", status: "completed" },
          ],
          rerun: [
            { id: 2, path: "calculate-tax", status: "failed", attempts: 4 },
            { id: 3, path: "save-invoice", status: "completed", attempts: 1 },
          ],
          reopen: [],
          restoreMessages: [{ id: 7, queue: "decisions", body: { approve: true }, sentAt: T0 }],
          restoreState: { subtotal: 100 },
          version: { from: 1, to: 2 },
          dryRun: true,
          applied: false,
          checkedAgainstCode: true,
        },
      }),
    );
    const words = text(html);
    expect(words).toContain("Starts again from calculate-tax . Runs on version 2 (was 1).");
    expect(words).toContain("Discards 2 entries");
    expect(words).toMatch(/calculate-tax failed save-invoice completed/);
    expect(words).toContain('Puts back 1 message decisions {"approve":true}');
    expect(words).toContain(
      "Runs 2 steps again calculate-tax failed before (4 attempts) save-invoice completed before: what it does (a charge, an email) happens again",
    );
  });

  test("an entry panel with nothing chosen asks for a choice", () => {
    const html = renderToString(h(EntryPanel, { entry: null, onReplay: null }));
    expect(text(html)).toContain("Choose an entry in the timeline");
  });

  test("a 10,000-entry timeline draws only a window of rows, with spacers holding the rest's height", () => {
    const entries = Array.from({ length: 10_000 }, (_, i) => bar(i + 1, `s${i}`));
    const html = renderToString(
      h(Timeline, {
        entries,
        run: { status: "completed", createdAt: T0, finishedAt: T0 + 1_000_100 },
        now: T0 + 2_000_000,
        selectedId: null,
        onSelect: () => {},
      }),
    );
    expect(entries.length).toBeGreaterThan(WINDOW_AT);
    const drawn = count(html, 'class="tl-main');
    expect(drawn).toBeGreaterThan(0);
    expect(drawn).toBeLessThan(100);
    const heights = [...html.matchAll(/class="tl-spacer"[^>]*style="height: ?(\d+)px/g)].map((m) =>
      Number(m[1]),
    );
    expect(heights).toHaveLength(2);
    expect((heights[0]! + heights[1]!) / 29 + drawn).toBe(10_000);
  });

  test("the entry shown first: the innermost failed entry of a failed run, else the one it waits in", () => {
    const failedJoin = bar(1, "notify", { kind: "join", status: "failed" });
    const failedStep = bar(2, "notify[sms]/send-sms", { status: "failed" });
    expect(defaultEntry([failedJoin, failedStep], { status: "failed", waiting: null })).toBe(2);
    const wait = bar(3, "await-decision", { kind: "queue", status: "waiting" });
    expect(
      defaultEntry([bar(1, "a"), wait], { status: "waiting", waiting: [{ entry: "await-decision" }] }),
    ).toBe(3);
    expect(defaultEntry([bar(1, "a")], { status: "completed", waiting: null })).toBeNull();
  });
});
