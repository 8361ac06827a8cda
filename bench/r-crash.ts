// The process scenario (r) kills: argv <waymark|rivet-sqlite> <db> <runs>. Starts that many runs of the
// endless workflow on the file, prints "ready" once every one is inside its step s5, then waits to be killed.

import { type CrashSubject, startInFlight } from "./scenarios/r-restart.js";

const [subject, db, runs] = process.argv.slice(2) as [CrashSubject, string, string];
await startInFlight(subject, db, Number(runs));
process.stdout.write("ready\n");
setInterval(() => {}, 60_000);
