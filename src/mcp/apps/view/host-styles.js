// @ts-check
// The host's style variables (MCP Apps hostContext.styles.variables, named by the spec: --color-text-primary,
// --font-sans, ...) mapped onto the inspector's own custom properties, which the views' styles use. A variable
// the host does not give keeps the inspector's value (light or dark, by the theme).

/** Each spec variable, and the inspector's properties it sets. */
const MAP = /** @type {const} */ ({
  "--color-background-primary": ["--panel"],
  "--color-background-secondary": ["--bg", "--row-alt"],
  "--color-background-tertiary": ["--code-bg", "--hover"],
  "--color-text-primary": ["--text"],
  "--color-text-secondary": ["--muted"],
  "--color-border-primary": ["--border"],
  "--color-ring-primary": ["--focus"],
  "--font-mono": ["--mono"],
});

/**
 * Sets the inspector's properties from the host's variables on <html> (inline, so they win over style.css).
 * @param {Record<string, string | undefined>} variables
 */
export function applyHostStyles(variables) {
  const style = document.documentElement.style;
  for (const [spec, ours] of Object.entries(MAP)) {
    const value = variables[spec];
    for (const name of ours) {
      if (value) style.setProperty(name, value);
      else style.removeProperty(name);
    }
  }
  const sans = variables["--font-sans"];
  style.fontFamily = sans ?? "";
}
