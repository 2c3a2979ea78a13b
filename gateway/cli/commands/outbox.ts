import type { Command } from "commander";
import type { OutboxView } from "../../control/control-api.ts";
import { type Wrap, withExamples } from "../context.ts";
import { duration } from "../output.ts";

export function registerOutbox(program: Command, wrap: Wrap): void {
  const cmd = program
    .command("outbox")
    .description("show events waiting for the broker's acknowledgement (the durable outbox)")
    .action(
      wrap(async (ctx) => {
        const o = await ctx.call<OutboxView>("outbox");
        if (ctx.out.json) return ctx.out.data({ outbox: o });
        ctx.out.pairs([
          ["pending", String(o.pending)],
          ["oldest", duration(o.oldest_age_s)],
        ]);
        if (o.rows.length > 0) {
          ctx.out.line();
          ctx.out.table(
            ["SEQ", "TYPE", "AGE"],
            o.rows.map((r) => [String(r.seq), r.type, duration(r.age_s)]),
          );
        }
      }),
    );
  withExamples(cmd, ["parkctl outbox", "parkctl outbox --json | jq .outbox.pending"]);
}
