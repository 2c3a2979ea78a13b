// First: on an unsupported Node this stops with what to run instead, before the rest loads.
import "../../shared/node/supported-node.ts";
import path from "node:path";
import { Command } from "commander";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { BROKEN_PIPE_EXIT, exitQuietlyOnBrokenPipe } from "../../shared/node/broken-pipe.ts";
import { runSubcommands } from "../../shared/node/command-line.ts";
import { packageVersion } from "../../shared/node/version.ts";
import { registerSessionCommands } from "../sessions/operator-commands.ts";
import { registerStaffCommands } from "../staff/staff-commands.ts";
import { type Db, openDb } from "../store/db.ts";
import { registerRiderCommands } from "../users/rider-commands.ts";
import { registerWebhookCommands } from "../webhooks/operator-commands.ts";

/**
 * `npm run operator -- <command>`: the service operator's day-to-day actions on a running site's store
 * (DATABASE_URL, or DATA_DIR's SQLite file). Each feature registers its own commands below.
 * Exit codes follow parkctl's table: 0 ok, 1 unexpected, 2 usage, 3 store unreachable, 4 not found.
 */

/** Opens the store the environment names, runs `fn`, and closes it whatever happens. */
export async function withStore<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  const url = process.env.DATABASE_URL;
  const target = url
    ? { kind: "postgres" as const, url }
    : { kind: "sqlite" as const, file: path.join(process.env.DATA_DIR || "./data", "cloud.db") };
  let db: Db;
  try {
    db = await openDb(target);
  } catch (err) {
    const where = target.kind === "sqlite" ? `${target.file} (DATA_DIR)` : "DATABASE_URL";
    throw new CliExit(EXIT.unreachable, `cannot open the store ${where}: ${(err as Error).message}`);
  }
  try {
    return await fn(db);
  } finally {
    await db.destroy();
  }
}

exitQuietlyOnBrokenPipe();

const program = new Command("operator")
  .description(
    "Operator actions on the parking cloud's store: sessions, payments, riders' tokens, webhooks, console staff",
  )
  .version(packageVersion(), "-V, --version", "print the version")
  .helpOption("-h, --help", "show this help")
  .showHelpAfterError("(run with --help for usage)")
  .addHelpText(
    "after",
    `
The store: DATABASE_URL (PostgreSQL), else DATA_DIR's cloud.db (default ./data; the demo's is ./data/demo).

Examples:
  $ DATA_DIR=./data/demo npm run operator -- mark-payment <payment_id> PAID
  $ DATA_DIR=./data/demo npm run operator -- end-session <session_id> --without-fee
  $ DATA_DIR=./data/demo npm run operator -- revoke-rider-tokens --operator <uuid> --user-id rider-ann
  $ DATABASE_URL=postgres://… npm run operator -- webhook-log --limit 5
  $ STAFF_PASSWORD=… DATA_DIR=./data/demo npm run operator -- staff add ann@example.com --role viewer --operator <uuid>

Exit codes (parkctl's table):
  0  ok
  1  unexpected error
  2  usage error
  3  the store is unreachable (DATABASE_URL, or DATA_DIR's cloud.db)
  4  not found (the session, payment, rider, message or staff member)
  6  refused in its state (a session already ended, a payment that cannot change so, a message pending,
     a staff email already taken)
  ${BROKEN_PIPE_EXIT}  the reader of its output went away (| head)
Every command has --help.`,
  );

// Feature commands are registered here, one line each: registerXCommands(program);
registerRiderCommands(program, withStore);
registerSessionCommands(program, withStore);
registerWebhookCommands(program, withStore);
registerStaffCommands(program, withStore);

/** An example for each command's --help (the features register the commands; their examples live here). */
const EXAMPLES: Record<string, string> = {
  "revoke-rider-tokens":
    "revoke-rider-tokens --operator 0b6f1a52-8c4e-4d1f-9a57-5f2d8e0c7a11 --user-id rider-ann",
  "end-session": "end-session <session_id> --without-fee",
  "mark-payment": "mark-payment <payment_id> PAID",
  webhooks: "webhooks",
  "webhook-log": "webhook-log --limit 5",
  "webhook-replay": "webhook-replay <message_id>",
};
for (const command of program.commands) {
  const example = EXAMPLES[command.name()];
  if (example)
    command.addHelpText(
      "after",
      `\nExample:\n  $ DATA_DIR=./data/demo npm run operator -- ${example}\n\nExit codes: as \`operator --help\` lists them.`,
    );
}

runSubcommands(program);
