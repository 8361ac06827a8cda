import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: on the 2-core CI machine, one file at a time. Most
    // of the slow files wait on child processes, sockets and PostgreSQL, so two at a time nearly halves the run.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
