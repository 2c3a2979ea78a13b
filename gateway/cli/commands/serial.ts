import type { Command } from "commander";
import type { SerialProbe } from "../../control/control-api.ts";
import { type Wrap, withExamples } from "../context.ts";
import { dash } from "../output.ts";

export function registerSerial(program: Command, wrap: Wrap): void {
  const serial = program.command("serial").description("serial bus tools");
  withExamples(serial, ["parkctl serial probe"]);
  const probe = serial
    .command("probe")
    .description("ask every configured board on every bus for its firmware and channel count")
    .action(
      wrap(async (ctx) => {
        // Probing walks every address on slow buses: allow more than the usual 10 s.
        const buses = await ctx.call<SerialProbe[]>("probeSerial", {}, 60_000);
        if (ctx.out.json) return ctx.out.data({ buses });
        const out = ctx.out;
        const rows: string[][] = [];
        for (const b of buses) {
          const open = out.yesNo(b.open);
          if (b.boards.length === 0) rows.push([b.bus, b.path, open, "-", "-", "-", "-", "-"]);
          for (const x of b.boards) {
            rows.push([
              b.bus,
              b.path,
              open,
              String(x.addr),
              out.yesNo(x.ok),
              dash(x.firmware),
              dash(x.channels),
              x.error ? out.paint("red", x.error) : "-",
            ]);
          }
        }
        out.table(["BUS", "PATH", "OPEN", "ADDR", "OK", "FIRMWARE", "CHANNELS", "ERROR"], rows);
      }),
    );
  withExamples(probe, [
    "parkctl serial probe",
    "parkctl serial probe --json | jq '.buses[].boards[] | select(.ok | not)'",
  ]);
}
