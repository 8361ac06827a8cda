// @ts-check
// The inspector page: routes (#/ runs, #/run/{workflow}/{key}), the header (mode, live state, theme),
// dialogs and notices shared by the views.

import { h, render } from "preact";
import { api, onLiveState } from "./api.js";
import { showRun } from "./run.js";
import { showRuns } from "./runs.js";

/** @typedef {import("./types.js").MetaAnswer} MetaAnswer */
/** @typedef {{ label: string, value?: unknown, class?: string }} DialogButton */
/**
 * What the app gives its views: the server's facts, links, notices and dialogs.
 * @typedef {object} AppContext
 * @property {MetaAnswer} meta
 * @property {(hash: string, params?: Record<string, string | null | undefined>) => string} href a hash
 *   link with query parameters (empty ones left out)
 * @property {(hash: string, params?: Record<string, string | null | undefined>) => void} go
 * @property {(err: unknown) => void} fail shows an error that nothing else handles
 * @property {(text: string, error?: boolean) => void} toast a notice that goes away by itself
 * @property {(title: string, body: import("preact").ComponentChildren, buttons: DialogButton[]) => Promise<unknown>} dialog
 *   a modal dialog; resolves with the chosen button's value (undefined when dismissed with Escape)
 */

/** @param {string} id */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const main = byId("main");
const dialog = /** @type {HTMLDialogElement} */ (byId("dialog"));
const toasts = byId("toasts");
let stopView = () => {};

/** @type {Array<{ id: number, text: string, error: boolean }>} */
let notices = [];
let noticeIds = 0;
function drawToasts() {
  render(
    notices.map((t) =>
      h(
        "div",
        { key: t.id, class: `toast${t.error ? " error" : ""}`, role: t.error ? "alert" : "status" },
        t.text,
      ),
    ),
    toasts,
  );
}

/** @type {AppContext} */
const ctx = {
  meta: { readOnly: true, attached: false, diagnosis: false, statuses: [], serverNow: 0 },
  href(hash, params = {}) {
    const q = new URLSearchParams(
      /** @type {Array<[string, string]>} */ (
        Object.entries(params).filter(([, v]) => v !== "" && v !== null && v !== undefined)
      ),
    );
    const s = q.toString();
    return s ? `${hash}?${s}` : hash;
  },
  go(hash, params) {
    location.hash = ctx.href(hash, params);
  },
  fail(err) {
    console.error(err);
    ctx.toast(/** @type {Error} */ (err)?.message ?? String(err), true);
  },
  toast(text, error = false) {
    const id = ++noticeIds;
    notices = [...notices, { id, text, error }];
    drawToasts();
    setTimeout(
      () => {
        notices = notices.filter((t) => t.id !== id);
        drawToasts();
      },
      error ? 8000 : 4000,
    );
  },
  dialog(title, body, buttons) {
    // Focus starts on the choice that changes nothing (Enter must not cancel or replay by accident).
    const safe = Math.max(
      buttons.findIndex((b) => b.value === undefined),
      0,
    );
    return new Promise((resolve) => {
      render(null, dialog);
      render(
        h(
          "form",
          { method: "dialog" },
          h("h2", { id: "dialog-title" }, title),
          h("div", { class: "dialog-body" }, body),
          h(
            "div",
            { class: "buttons" },
            buttons.map((b, i) =>
              h("button", { key: i, value: String(i), class: b.class ?? "", autofocus: i === safe }, b.label),
            ),
          ),
        ),
        dialog,
      );
      dialog.setAttribute("aria-labelledby", "dialog-title");
      dialog.returnValue = "";
      dialog.addEventListener(
        "close",
        () => {
          const i = dialog.returnValue === "" ? -1 : Number(dialog.returnValue);
          resolve(buttons[i]?.value);
        },
        { once: true },
      );
      dialog.showModal();
    });
  },
};

function route() {
  stopView();
  stopView = () => {};
  main.replaceChildren();
  const raw = location.hash.slice(1) || "/";
  const [path = "/", query = ""] = raw.split("?");
  const params = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean);
  try {
    if (parts[0] === "run" && parts.length === 3) {
      const workflow = decodeURIComponent(parts[1] ?? "");
      const key = decodeURIComponent(parts[2] ?? "");
      document.title = `${workflow}/${key} · Waymark`;
      stopView = showRun(main, workflow, key, params, ctx);
    } else {
      document.title = "Runs · Waymark";
      stopView = showRuns(main, params, ctx);
    }
  } catch (err) {
    ctx.fail(err);
  }
  main.focus({ preventScroll: true });
}

// ---- header: mode, live state, theme ------------------------------------------------------------

const THEMES = ["auto", "light", "dark"];
function applyTheme(/** @type {string} */ theme) {
  if (theme === "auto") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  const button = byId("theme");
  button.textContent = `Theme: ${theme}`;
  button.setAttribute("aria-label", `Colour theme: ${theme}. Change it.`);
}
byId("theme").addEventListener("click", () => {
  const current = localStorage.getItem("waymark-theme") ?? "auto";
  const next = THEMES[(THEMES.indexOf(current) + 1) % THEMES.length] ?? "auto";
  localStorage.setItem("waymark-theme", next);
  applyTheme(next);
});
applyTheme(localStorage.getItem("waymark-theme") ?? "auto");

const liveEl = byId("live");
onLiveState((state) => {
  liveEl.dataset.state = state;
  liveEl.textContent = state === "live" ? "live" : "reconnecting…";
});

async function start() {
  try {
    ctx.meta = /** @type {MetaAnswer} */ (await api("/meta"));
  } catch (err) {
    main.replaceChildren();
    render([h("h1", {}, "Cannot reach the server"), h("p", {}, /** @type {Error} */ (err).message)], main);
    return;
  }
  const mode = byId("mode");
  const tags = [];
  if (ctx.meta.readOnly) tags.push("read-only");
  if (ctx.meta.attached) tags.push("attached");
  mode.textContent = tags.join(" · ");
  mode.hidden = tags.length === 0;
  mode.title = ctx.meta.attached
    ? "This server has no workflow code: another process runs the workflows."
    : "";
  window.addEventListener("hashchange", route);
  route();
}

// "/" jumps to the first filter (or search) field, as in many list views.
document.addEventListener("keydown", (ev) => {
  const target = /** @type {Element | null} */ (ev.target);
  if (ev.key !== "/" || target?.closest?.("input, textarea, select, [contenteditable]")) return;
  const field = main.querySelector("form.filters input, form.filters select");
  if (field instanceof HTMLElement) {
    ev.preventDefault();
    field.focus();
  }
});

start();
