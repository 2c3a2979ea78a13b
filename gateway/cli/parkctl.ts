/** parkctl entry point: `npm run parkctl -- <command>` or `tsx gateway/cli/parkctl.ts <command>`. */
import { processIo } from "./io.ts";
import { runParkctl } from "./run-parkctl.ts";

process.exitCode = await runParkctl(process.argv.slice(2), processIo());
