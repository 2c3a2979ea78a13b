#!/usr/bin/env node
/**
 * parkctl entry point: `npm run parkctl -- <command>` from a checkout (through tsx); built, `parkctl
 * <command>` (package.json bin: `node dist/gateway/cli/parkctl.js`).
 */
// First: on an unsupported Node this stops with what to run instead, before the rest loads.
import "../../shared/node/supported-node.ts";
import { exitQuietlyOnBrokenPipe } from "../../shared/node/broken-pipe.ts";
import { processIo } from "./io.ts";
import { runParkctl } from "./run-parkctl.ts";

exitQuietlyOnBrokenPipe();
process.exitCode = await runParkctl(process.argv.slice(2), processIo());
