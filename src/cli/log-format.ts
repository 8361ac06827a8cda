// `--log-format text|json`: taken out of any verb's arguments by main.ts and applied to the process.

import { LOG_FORMATS, type LogFormat, setLogFormat } from "../log.js";

/** Takes `--log-format F` or `--log-format=F` out of the arguments and applies it; a string is the problem. */
export function takeLogFormat(argv: string[]): string[] | { problem: string } {
  const i = argv.findIndex((a) => a === "--log-format" || a.startsWith("--log-format="));
  if (i < 0) return argv;
  const inline = argv[i]!.includes("=");
  const value = inline ? argv[i]!.slice(argv[i]!.indexOf("=") + 1) : argv[i + 1];
  if (!LOG_FORMATS.includes(value as LogFormat)) {
    return {
      problem: `--log-format takes text or json; got ${value === undefined ? "nothing" : JSON.stringify(value)}.`,
    };
  }
  setLogFormat(value as LogFormat);
  return [...argv.slice(0, i), ...argv.slice(i + (inline ? 1 : 2))];
}
