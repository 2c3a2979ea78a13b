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
          devices.map((device) => row(ctx.out, device)),
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
        const device = await lookupDevice(ctx, alias);
        if (ctx.out.json) return ctx.out.data({ device: device });
        const out = ctx.out;
        const r = row(out, device);
        out.pairs([
          ["alias", device.alias],
          ["device id", device.device_id],
          ["type", device.type],
          ["wiring", `bus ${dash(device.bus)} board ${dash(device.board)} channel ${dash(device.channel)}`],
          ["reachable", r[5] ?? "-"],
          ["latch", r[6] ?? "-"],
          ["door open", out.yesNo(device.door_open, false)],
          ["item present", out.yesNo(device.item_present, null)],
          ["last command", r[9] ?? "-"],
          ["booking", device.booking ? `${device.booking.holder} until ${device.booking.until}` : "-"],
          ["power save", device.power_save ? `${device.power_save.strategy}, ${sleepWord(device)}` : "-"],
        ]);
      }),
    );
  withExamples(one, ["parkctl device locker-12", "parkctl device door-north --json"]);
}

/** The device, or exit 4 when the daemon knows no such alias. */
export async function lookupDevice(ctx: CliContext, alias: string): Promise<DeviceView> {
  const device = await ctx.call<DeviceView | null>("device", { alias });
  if (!device) throw ctx.notFound(alias);
  return device;
}

/** A power-saving device's sleep, in words. */
function sleepWord(device: DeviceView): string {
  switch (device.power_save?.sleep_state) {
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

function row(out: Output, device: DeviceView): string[] {
  const last = device.last_command
    ? `${device.last_command.name} ${device.last_command.result} at ${device.last_command.at}`
    : "-";
  return [
    device.alias,
    device.type,
    dash(device.bus),
    dash(device.board),
    dash(device.channel),
    // A sleeping device's board answers; the device itself may not (deep sleep) or only late (light).
    device.power_save?.sleep_state
      ? `${out.yesNo(device.reachable)} (${sleepWord(device)})`
      : out.yesNo(device.reachable),
    device.latch === null ? "-" : out.paint(device.latch === "locked" ? "green" : "yellow", device.latch),
    device.door_open === null ? "-" : device.door_open ? out.paint("yellow", "open") : "closed",
    out.yesNo(device.item_present, null),
    last,
  ];
}
