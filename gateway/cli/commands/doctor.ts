import type { Command } from "commander";
import { EXIT } from "../../../shared/cli/exit-codes.ts";
import type { DoctorCheck } from "../../control/control-api.ts";
import { ControlUnreachableError } from "../../control/control-client.ts";
import { type CliContext, type Wrap, withExamples } from "../context.ts";
import { SocketNotFoundError } from "../discover.ts";
import type { Output } from "../output.ts";

export function registerDoctor(program: Command, wrap: Wrap): void {
  const cmd = program
    .command("doctor")
    .description(
      "run the daemon's health checks (broker, clock, serial, database, whitelist age, outbox age) and print each as pass/warn/fail with a hint",
    )
    .action(
      wrap(async (ctx) => {
        let checks: DoctorCheck[];
        let code: number = EXIT.ok;
        try {
          // Checks touch the broker, the buses and the database: allow more than a query.
          checks = [
            daemonCheck(true, ctx.socketPath()),
            ...(await ctx.call<DoctorCheck[]>("doctor", {}, 30_000)),
          ];
        } catch (err) {
          if (!(err instanceof ControlUnreachableError)) throw err;
          checks = [daemonCheck(false, err.path, err.message, hintFor(ctx, err))];
          code = EXIT.unreachable;
        }
        const failed = checks.filter((c) => c.status === "fail").length;
        if (code === EXIT.ok && failed > 0) code = EXIT.checkFailed;
        if (ctx.out.json) ctx.out.data({ ok: failed === 0, checks });
        else print(ctx.out, checks);
        return code;
      }),
    );
  withExamples(cmd, [
    "parkctl doctor",
    "parkctl doctor --json | jq -r '.checks[] | select(.status != \"pass\") | .hint'",
  ]);
}

const SYSTEMD_HINT =
  "start it: systemctl start parking-gateway; why it stopped: journalctl -u parking-gateway -n 50";

/** The systemd advice for the packaged daemon; the demo's or the variable's for a socket found that way. */
function hintFor(ctx: CliContext, err: ControlUnreachableError): string {
  if (err instanceof SocketNotFoundError) return err.hint;
  const source = ctx.socketChoice().source;
  return source === "gateway" || source === "env" ? ctx.unreachableHint() : SYSTEMD_HINT;
}

function daemonCheck(up: boolean, socket: string, detail = "", hint = SYSTEMD_HINT): DoctorCheck {
  return up
    ? { check: "daemon", status: "pass", detail: `answering on ${socket}`, hint: "" }
    : { check: "daemon", status: "fail", detail, hint };
}

function print(out: Output, checks: DoctorCheck[]): void {
  const w = Math.max(0, ...checks.map((c) => c.check.length));
  for (const c of checks) {
    out.line(`${out.check(c.status)}  ${c.check.padEnd(w)}  ${c.detail}`);
    if (c.status !== "pass" && c.hint)
      out.line(`${" ".repeat(6 + w)}  ${out.paint("dim", `hint: ${c.hint}`)}`);
  }
  const count = (s: DoctorCheck["status"]) => checks.filter((c) => c.status === s).length;
  out.line();
  out.line(`${count("pass")} pass, ${count("warn")} warn, ${count("fail")} fail`);
}
