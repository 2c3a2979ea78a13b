import type { Command } from "commander";
import { Uuid } from "../../shared/api/uuid.ts";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { STAFF_ROLES, type StaffRole } from "../../shared/domain/staff-roles.ts";
import { systemClock } from "../../shared/node/system-clock.ts";
import type { Clock } from "../../shared/time/clock.ts";
import type { Db } from "../store/db.ts";
import { readPassword } from "./password-input.ts";
import type { Staff } from "./staff-repository.ts";
import { createStaffService, passwordProblem, StaffEmail } from "./staff-service.ts";

type WithStore = <T>(fn: (db: Db) => Promise<T>) => Promise<T>;

const DEFAULT_PASSWORD_ENV = "STAFF_PASSWORD";

const HELP = `
The password is never an argument (it would stay in the shell's history): it is read from the
environment variable --password-env names (default ${DEFAULT_PASSWORD_ENV}) when set, else asked at the
terminal (not echoed), else read from the first line of stdin. At least 10 characters.

Examples:
  $ DATA_DIR=./data/demo npm run operator -- staff add ann@example.com --role operator --operator <uuid>
  $ printf '%s\\n' "$PW" | npm run operator -- staff add root@example.com --role admin --superadmin
  $ DATA_DIR=./data/demo npm run operator -- staff list --operator <uuid>
  $ DATA_DIR=./data/demo npm run operator -- staff disable ann@example.com
  $ STAFF_PASSWORD=… DATA_DIR=./data/demo npm run operator -- staff reset ann@example.com

Exit codes: 0 ok, 1 unexpected, 2 usage (a bad email, role or password), 3 store unreachable,
4 not found (the email, or --operator's operator), 6 refused in its state (the email is taken).`;

const EXAMPLES: Record<string, string> = {
  add: "add ann@example.com --role operator --operator 0b6f1a52-8c4e-4d1f-9a57-5f2d8e0c7a11",
  list: "list --operator 0b6f1a52-8c4e-4d1f-9a57-5f2d8e0c7a11",
  disable: "disable ann@example.com",
  reset: "reset ann@example.com",
};

function email(value: string): string {
  const parsed = StaffEmail.safeParse(value);
  if (!parsed.success) throw new CliExit(EXIT.usage, `not an email address: ${value}`);
  return parsed.data;
}

async function password(envName: string): Promise<string> {
  const given = await readPassword(envName);
  const problem = passwordProblem(given);
  if (problem) throw new CliExit(EXIT.usage, `the password ${problem}`);
  return given;
}

const scopeOf = (s: Staff) => (s.operatorId === null ? "superadmin" : `operator ${s.operatorId}`);

/** `npm run operator -- staff add|list|disable|reset`: the console's staff accounts. */
export function registerStaffCommands(program: Command, withStore: WithStore, clock: Clock = systemClock) {
  const staff = program
    .command("staff")
    .description("Console staff accounts: add, list, disable, reset a password")
    .addHelpText("after", HELP);
  const service = (db: Db) => createStaffService({ db, clock });

  staff
    .command("add <email>")
    .description("Add a staff member of one operator (or a superadmin, who sees every operator)")
    .requiredOption("--role <role>", `one of ${STAFF_ROLES.join(", ")}`)
    .option("--operator <uuid>", "the operator whose sites the staff member sees")
    .option("--superadmin", "of no operator: sees every operator")
    .option("--password-env <name>", "environment variable holding the password", DEFAULT_PASSWORD_ENV)
    .action(
      async (
        address: string,
        opts: { role: string; operator?: string; superadmin?: boolean; passwordEnv: string },
      ) => {
        if (!(STAFF_ROLES as readonly string[]).includes(opts.role))
          throw new CliExit(EXIT.usage, `--role: one of ${STAFF_ROLES.join(", ")}`);
        if ((opts.operator === undefined) === !opts.superadmin)
          throw new CliExit(EXIT.usage, "give exactly one of --operator and --superadmin");
        const operatorId = opts.operator === undefined ? null : Uuid.safeParse(opts.operator);
        if (operatorId && !operatorId.success) throw new CliExit(EXIT.usage, "--operator: must be a UUID");
        const member = {
          email: email(address),
          role: opts.role as StaffRole,
          operatorId: operatorId?.data ?? null,
          password: await password(opts.passwordEnv),
        };
        const created = await withStore((db) => service(db).create(member));
        if (created === "exists") throw new CliExit(EXIT.checkFailed, `${member.email} is already staff`);
        if (created === "no-operator") throw new CliExit(EXIT.notFound, `no operator ${member.operatorId}`);
        console.log(`added ${created.email}: ${created.role}, ${scopeOf(created)}`);
      },
    );

  staff
    .command("list")
    .description("List staff members: email, role, operator, and whether disabled")
    .option("--operator <uuid>", "only this operator's")
    .action(async (opts: { operator?: string }) => {
      const members = await withStore((db) => service(db).list(opts.operator));
      for (const m of members) {
        const state = m.disabledAt === null ? "active" : `disabled ${m.disabledAt}`;
        console.log([m.email, m.role, m.operatorId ?? "superadmin", state].join("\t"));
      }
    });

  staff
    .command("disable <email>")
    .description("Disable a staff member: signs them out everywhere and refuses their sign-ins")
    .action(async (address: string) => {
      const done = await withStore((db) => service(db).disable(email(address)));
      if (!done) throw new CliExit(EXIT.notFound, `no staff member ${address}`);
      console.log(`disabled ${done.email} and ended their console sessions`);
    });

  staff
    .command("reset <email>")
    .description("Give a staff member a new password: signs them out everywhere")
    .option("--password-env <name>", "environment variable holding the password", DEFAULT_PASSWORD_ENV)
    .action(async (address: string, opts: { passwordEnv: string }) => {
      const target = email(address);
      const secret = await password(opts.passwordEnv);
      const done = await withStore((db) => service(db).resetPassword(target, secret));
      if (!done) throw new CliExit(EXIT.notFound, `no staff member ${address}`);
      console.log(`reset the password of ${done.email} and ended their console sessions`);
    });

  // Nested commands stop with the table's codes too (runSubcommands sets this on the top level only).
  staff.exitOverride();
  for (const c of staff.commands) {
    c.exitOverride();
    c.addHelpText(
      "after",
      `\nExample:\n  $ DATA_DIR=./data/demo npm run operator -- staff ${EXAMPLES[c.name()] ?? c.name()}\n\n` +
        "Exit codes: as `operator staff --help` lists them.",
    );
  }
}
