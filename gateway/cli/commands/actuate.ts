import type { Command } from "commander";
import { CliExit, EXIT } from "../../../shared/cli/exit-codes.ts";
import type { ActuationResult } from "../../control/control-api.ts";
import { ControlCallError } from "../../control/control-client.ts";
import { confirm, refuseWithoutTerminal } from "../confirm.ts";
import { type CliContext, isNotFoundCode, type Wrap, withExamples } from "../context.ts";
import { dash } from "../output.ts";
import { lookupDevice } from "./devices.ts";

type TestCycle = { alias: string; steps: (ActuationResult & { step: string })[] };

/** Actuations wait for the hardware to confirm: allow longer than a query. */
const ACTUATE_TIMEOUT_MS = 30_000;
const TEST_CYCLE_TIMEOUT_MS = 90_000;

export function registerActuate(program: Command, wrap: Wrap): void {
  for (const action of ["lock", "unlock"] as const) {
    const cmd = program
      .command(action)
      .argument("<alias>", "device alias, as in `parkctl devices`")
      .description(
        `${action} a device locally; recorded with who and why and reported to the cloud (asks first on a terminal)`,
      )
      .requiredOption("-r, --reason <text>", "why (recorded in the audit trail)")
      .option("--who <name>", "who is acting (default: $SUDO_USER, else $USER, else the login account)")
      .option("-y, --yes", "do not ask for confirmation (required when stdin is not a terminal)")
      .action(wrap((ctx, [alias = ""], opts) => actuate(ctx, action, alias, opts)));
    withExamples(cmd, [
      `parkctl ${action} locker-12 --reason "bike stuck, customer on site"`,
      `parkctl ${action} locker-12 --reason "ticket 4711" --yes --json`,
    ]);
  }

  const cycle = program
    .command("test-cycle")
    .argument("<alias>", "device alias, as in `parkctl devices`")
    .description("unlock, check, lock and check one device, timing each step (asks first on a terminal)")
    .option("--who <name>", "who is testing (default: $SUDO_USER, else $USER, else the login account)")
    .option("-y, --yes", "do not ask for confirmation (required when stdin is not a terminal)")
    .action(wrap((ctx, [alias = ""], opts) => testCycle(ctx, alias, opts)));
  withExamples(cycle, ["parkctl test-cycle locker-12", "parkctl test-cycle locker-12 --yes --json"]);
}

async function actuate(
  ctx: CliContext,
  action: "lock" | "unlock",
  alias: string,
  opts: Record<string, unknown>,
): Promise<number> {
  const reason = String(opts.reason ?? "").trim();
  if (!reason) throw new CliExit(EXIT.usage, `--reason must say why the device is ${action}ed`);
  const yes = opts.yes === true;
  const who = ctx.who(opts.who as string | undefined);
  refuseWithoutTerminal(ctx.io, yes, `${action} ${alias}`);
  const device = await lookupDevice(ctx, alias);
  await confirm(
    ctx.io,
    yes,
    `${action} ${device.alias} (${device.type}, now ${dash(device.latch)}) as ${who}, reason "${reason}"?`,
  );
  const result = await notFoundAs(ctx, alias, () =>
    ctx.call<ActuationResult>("actuate", { alias, action, who, why: reason }, ACTUATE_TIMEOUT_MS),
  );
  const out = ctx.out;
  if (out.json) out.data({ alias, action, who, reason, result });
  else
    out.pairs([
      ["device", alias],
      ["action", action],
      [
        "result",
        out.paint(
          result.ok ? "green" : "red",
          result.ok ? `ok (${result.result})` : `FAILED (${result.result})`,
        ),
      ],
      ["latch", dash(result.latch)],
      ["took", `${result.ms} ms`],
    ]);
  if (result.ok) return EXIT.ok;
  ctx.note(`${action} ${alias} failed: ${result.result} (latch is ${dash(result.latch)})`);
  return EXIT.actuationFailed;
}

async function testCycle(ctx: CliContext, alias: string, opts: Record<string, unknown>): Promise<number> {
  const yes = opts.yes === true;
  const who = ctx.who(opts.who as string | undefined);
  refuseWithoutTerminal(ctx.io, yes, `test-cycle ${alias}`);
  const device = await lookupDevice(ctx, alias);
  await confirm(
    ctx.io,
    yes,
    `test-cycle ${device.alias} (${device.type}): it will be unlocked, then locked again. Go on?`,
  );
  const cycle = await notFoundAs(ctx, alias, () =>
    ctx.call<TestCycle>("testCycle", { alias, who }, TEST_CYCLE_TIMEOUT_MS),
  );
  const ok = cycle.steps.length > 0 && cycle.steps.every((s) => s.ok);
  const out = ctx.out;
  if (out.json) out.data({ alias: cycle.alias, who, ok, steps: cycle.steps });
  else
    out.table(
      ["STEP", "OK", "RESULT", "LATCH", "MS"],
      cycle.steps.map((s) => [s.step, out.yesNo(s.ok), s.result, dash(s.latch), String(s.ms)]),
    );
  if (ok) return EXIT.ok;
  const failed = cycle.steps.find((s) => !s.ok);
  ctx.note(`test-cycle ${alias} failed${failed ? ` at ${failed.step}: ${failed.result}` : ": no steps ran"}`);
  return EXIT.actuationFailed;
}

/** A device that vanished between the lookup and the action is still "not found" (exit 4). */
async function notFoundAs<T>(ctx: CliContext, alias: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ControlCallError && isNotFoundCode(err.code)) throw ctx.notFound(alias);
    throw err;
  }
}
