// The inspector page: routes (#/ runs, #/run/{workflow}/{key}), the header (mode, live state, theme),
// dialogs and notices shared by the views.

import { api, fill, h, onLiveState } from "./lib.js";
import { showRun } from "./run.js";
import { showRuns } from "./runs.js";

const main = document.getElementById("main");
const dialog = document.getElementById("dialog");
const toasts = document.getElementById("toasts");
let stopView = () => {};

const ctx = {
  meta: { readOnly: true, statuses: [] },
  /** A hash link with query parameters (empty ones left out). */
  href(hash, params = {}) {
    const q = new URLSearchParams(
      Object.entries(params).filter(([, v]) => v !== "" && v !== null && v !== undefined),
    );
    const s = q.toString();
    return s ? `${hash}?${s}` : hash;
  },
  go(hash, params) {
    location.hash = ctx.href(hash, params);
  },
  fail(err) {
    console.error(err);
    ctx.toast(err?.message ?? String(err), true);
  },
  toast(text, error = false) {
    const el = h("div", { class: `toast${error ? " error" : ""}`, role: error ? "alert" : "status", text });
    toasts.append(el);
    setTimeout(() => el.remove(), error ? 8000 : 4000);
  },
  /** A modal dialog; resolves with the chosen button's value (undefined when dismissed with Escape). */
  dialog(title, body, buttons) {
    // Focus starts on the choice that changes nothing (Enter must not cancel or replay by accident).
    const safe = buttons.findIndex((b) => b.value === undefined);
    return new Promise((resolve) => {
      const heading = h("h2", { id: "dialog-title", text: title });
      const form = h(
        "form",
        { method: "dialog" },
        heading,
        h("div", { class: "dialog-body" }, body),
        h(
          "div",
          { class: "buttons" },
          buttons.map((b, i) =>
            h("button", {
              value: String(i),
              class: b.class ?? "",
              autofocus: i === Math.max(safe, 0),
              text: b.label,
            }),
          ),
        ),
      );
      fill(dialog, form);
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
  const raw = location.hash.slice(1) || "/";
  const [path, query = ""] = raw.split("?");
  const params = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean);
  try {
    if (parts[0] === "run" && parts.length === 3) {
      const workflow = decodeURIComponent(parts[1]);
      const key = decodeURIComponent(parts[2]);
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
function applyTheme(theme) {
  if (theme === "auto") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  const button = document.getElementById("theme");
  button.textContent = `Theme: ${theme}`;
  button.setAttribute("aria-label", `Colour theme: ${theme}. Change it.`);
}
document.getElementById("theme").addEventListener("click", () => {
  const current = localStorage.getItem("waymark-theme") ?? "auto";
  const next = THEMES[(THEMES.indexOf(current) + 1) % THEMES.length];
  localStorage.setItem("waymark-theme", next);
  applyTheme(next);
});
applyTheme(localStorage.getItem("waymark-theme") ?? "auto");

const liveEl = document.getElementById("live");
onLiveState((state) => {
  liveEl.dataset.state = state;
  liveEl.textContent = state === "live" ? "live" : "reconnecting…";
});

async function start() {
  try {
    ctx.meta = await api("/meta");
  } catch (err) {
    fill(main, h("h1", { text: "Cannot reach the server" }), h("p", { text: err.message }));
    return;
  }
  const mode = document.getElementById("mode");
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
  if (ev.key !== "/" || ev.target.closest?.("input, textarea, select, [contenteditable]")) return;
  const field = main.querySelector("form.filters input, form.filters select");
  if (field) {
    ev.preventDefault();
    field.focus();
  }
});

start();
