#!/usr/bin/env node
/**
 * parkctl entry point: `npm run parkctl -- <command>` from a checkout (through tsx); built, `parkctl
 * <command>` (package.json bin: `node dist/gateway/cli/parkctl.js`).
 */
import { processIo } from "./io.ts";
import { runParkctl } from "./run-parkctl.ts";

process.exitCode = await runParkctl(process.argv.slice(2), processIo());
