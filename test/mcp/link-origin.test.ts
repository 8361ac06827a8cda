// Inspector links never carry a wildcard bind address: 0.0.0.0 / :: link to 127.0.0.1 (which a browser on
// this machine opens), and --public-url puts its own origin in every link.

import { expect, test } from "vitest";
import { parseArgs } from "../../src/cli/mcp-args.js";
import { inspectorRoot, inspectorUrl } from "../../src/mcp/links.js";

test("a wildcard bind links to 127.0.0.1; a loopback or named host stays; --public-url overrides", () => {
  expect(inspectorRoot("http://0.0.0.0:3920/mcp")).toBe("http://127.0.0.1:3920/");
  expect(inspectorRoot("http://[::]:3920/mcp")).toBe("http://127.0.0.1:3920/");
  expect(inspectorRoot("http://127.0.0.1:41000/mcp")).toBe("http://127.0.0.1:41000/");
  expect(inspectorRoot("http://[::1]:41000/mcp")).toBe("http://[::1]:41000/");
  expect(inspectorRoot("http://0.0.0.0:3920/mcp", "https://wm.example.com/ops")).toBe(
    "https://wm.example.com/ops/",
  );
  expect(inspectorUrl(inspectorRoot("http://0.0.0.0:3920/mcp"), "invoice", "a/1")).toBe(
    "http://127.0.0.1:3920/#/run/invoice/a%2F1",
  );
});

test("--public-url takes an http(s) URL", () => {
  const parsed = parseArgs(["--http", "0.0.0.0:3920", "--public-url", "https://wm.example.com/"]);
  expect(parsed).toMatchObject({ host: "0.0.0.0", publicUrl: "https://wm.example.com/" });
  expect(parseArgs(["--http", "0"])).toMatchObject({ publicUrl: null });
  expect(() => parseArgs(["--public-url", "wm.example.com"])).toThrow(/--public-url takes an http\(s\) URL/);
  expect(() => parseArgs(["--public-url", "ftp://x/"])).toThrow(/--public-url takes an http\(s\) URL/);
});
