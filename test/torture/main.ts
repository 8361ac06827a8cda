// `npm run torture [-- --kills 200 --seed 42 --per-workflow 2 --verbose]`
import { main } from "./harness.js";

process.exitCode = await main(process.argv.slice(2));
