import type { Command } from "commander";
import type { DeviceView } from "../../control/control-api.ts";
import { type CliContext, type Wrap, withExamples } from "../context.ts";
import { dash, type Output } from "../output.ts";

const HEADERS = ["ALIAS", "TYPE", "BUS", "BOARD", "CH", "REACHABLE", "LATCH", "DOOR", "ITEM", "LAST COMMAND"];

export function registerDevices(program: Command, wrap: Wrap): void {
  const list = program
    .command("devices")
    .description("list the devices this gateway drives, with their live state")
    .action(
      wrap(async (ctx) => {
        const devices = await ctx.call<DeviceView[]>("devices");
        if (ctx.out.json) return ctx.out.data({ devices });
        ctx.out.table(
          HEADERS,
          devices.map((d) => row(ctx.out, d)),
        );
      }),
    );
  withExamples(list, [
    "parkctl devices",
    "parkctl devices --json | jq -r '.devices[] | select(.reachable | not) | .alias'",
  ]);

  const one = program
    .command("device")
    .argument("<alias>", "device alias, as in `parkctl devices`")
    .description("show one device's state")
    .action(
      wrap(async (ctx, [alias = ""]) => {
        const d = await lookupDevice(ctx, alias);
        if (ctx.out.json) return ctx.out.data({ device: d });
        const out = ctx.out;
        const r = row(out, d);
        out.pairs([
          ["alias", d.alias],
          ["device id", d.device_id],
          ["type", d.type],
          ["wiring", `bus ${dash(d.bus)} board ${dash(d.board)} channel ${dash(d.channel)}`],
          ["reachable", r[5] ?? "-"],
          ["latch", r[6] ?? "-"],
          ["door open", out.yesNo(d.door_open, false)],
          ["item present", out.yesNo(d.item_present, null)],
          ["last command", r[9] ?? "-"],
          ["booking", d.booking ? `${d.booking.holder} until ${d.booking.until}` : "-"],
          ["power save", d.power_save ? `${d.power_save.strategy}, ${sleepWord(d)}` : "-"],
        ]);
      }),
    );
  withExamples(one, ["parkctl device locker-12", "parkctl device door-north --json"]);
}

/** The device, or exit 4 when the daemon knows no such alias. */
export async function lookupDevice(ctx: CliContext, alias: string): Promise<DeviceView> {
  const d = await ctx.call<DeviceView | null>("device", { alias });
  if (!d) throw ctx.notFound(alias);
  return d;
}

/** A power-saving device's sleep, in words. */
function sleepWord(d: DeviceView): string {
  switch (d.power_save?.sleep_state) {
    case "":
      return "awake";
    case "LIGHT_SLEEP":
      return "light sleep";
    case "DEEP_SLEEP":
      return "deep sleep";
    default:
      return "sleep not known yet";
  }
}

function row(out: Output, d: DeviceView): string[] {
  const last = d.last_command
    ? `${d.last_command.name} ${d.last_command.result} at ${d.last_command.at}`
    : "-";
  return [
    d.alias,
    d.type,
    dash(d.bus),
    dash(d.board),
    dash(d.channel),
    // A sleeping device's board answers; the device itself may not (deep sleep) or only late (light).
    d.power_save?.sleep_state ? `${out.yesNo(d.reachable)} (${sleepWord(d)})` : out.yesNo(d.reachable),
    d.latch === null ? "-" : out.paint(d.latch === "locked" ? "green" : "yellow", d.latch),
    d.door_open === null ? "-" : d.door_open ? out.paint("yellow", "open") : "closed",
    out.yesNo(d.item_present, null),
    last,
  ];
}
