import type { Command } from "commander";
import type { GatewayStatus } from "../../control/control-api.ts";
import { type Wrap, withExamples } from "../context.ts";
import { dash, duration } from "../output.ts";

export function registerStatus(program: Command, wrap: Wrap): void {
  const cmd = program
    .command("status")
    .description("show the gateway: broker link, serial buses, readers, outbox, device count and key cache")
    .action(
      wrap(async (ctx) => {
        const s = await ctx.call<GatewayStatus>("status");
        const out = ctx.out;
        if (out.json) return out.data({ status: s });
        const broker = s.broker.connected
          ? `${out.paint("green", "connected")} to ${s.broker.url} since ${dash(s.broker.since)}`
          : `${out.paint("red", "disconnected")} from ${s.broker.url}${s.broker.since ? ` since ${s.broker.since}` : ""}`;
        out.pairs([
          ["gateway", `${s.gateway_id} (version ${s.version})`],
          ["uptime", duration(s.uptime_s)],
          ["clock", s.now],
          ["broker", broker],
          [
            "outbox",
            s.outbox.pending === 0
              ? "empty"
              : `${s.outbox.pending} pending, oldest ${duration(s.outbox.oldest_age_s)}`,
          ],
          ["devices", String(s.devices)],
          [
            "key cache",
            s.keys.version === 0
              ? out.paint("yellow", "never synced with the cloud")
              : `version ${s.keys.version}, ${s.keys.grants} grant${s.keys.grants === 1 ? "" : "s"}`,
          ],
        ]);
        out.line();
        out.table(
          ["BUS", "PATH", "OPEN", "BOARDS REACHABLE", "UNREACHABLE"],
          s.buses.map((b) => {
            const down = b.boards.filter((x) => !x.reachable).map((x) => String(x.addr));
            return [
              b.name,
              b.path,
              out.yesNo(b.open),
              `${b.boards.length - down.length}/${b.boards.length}`,
              down.length ? out.paint("red", down.join(",")) : "-",
            ];
          }),
        );
        out.line();
        out.table(
          ["READER", "PATH", "OPEN", "LAST SEEN"],
          s.readers.map((r) => [r.id, r.path, out.yesNo(r.open), dash(r.last_seen)]),
        );
      }),
    );
  withExamples(cmd, ["parkctl status", "parkctl status --json | jq .status.outbox"]);
}
