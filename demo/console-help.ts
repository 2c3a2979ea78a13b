/** The hardware console's commands: their usage, what each does, and examples that work on the manifest. */
import type { ConsoleLocation } from "./console-locations.ts";
import { isDoorType } from "./demo-wiring.ts";

export const HARDWARE_COMMANDS = ["tap", "open", "close", "tamper", "untamper", "turn"] as const;
export const GLOBAL_COMMANDS = ["status", "help"] as const;
export const ALL_COMMANDS = [...HARDWARE_COMMANDS, ...GLOBAL_COMMANDS];
export type HardwareCommand = (typeof HARDWARE_COMMANDS)[number];

export const SAMPLE_CARD = "04a1b2c3d4";

export const USAGE: Record<HardwareCommand, string> = {
  tap: "tap <door> <card>",
  open: "open <door>",
  close: "close <door>",
  tamper: "tamper [device]",
  untamper: "untamper [device]",
  turn: "turn <device> locked|unlocked",
};

const WHAT: Record<HardwareCommand, string> = {
  tap: "hold a card to the reader at a door",
  open: "a person pushes the door open (it stays shut while its lock is engaged)",
  close: "the door is shut again",
  tamper: "trip the tamper switch (of the location's first board channel, or of the device)",
  untamper: "put the tamper switch back at rest",
  turn: "turn a latch by hand, as with a service key",
};

export function helpText(
  locations: ConsoleLocation[],
  examples: Partial<Record<HardwareCommand, string>>,
): string {
  const rows: [string, string, string][] = HARDWARE_COMMANDS.map((c) => [
    `<location> ${USAGE[c]}`,
    WHAT[c],
    examples[c] ?? "",
  ]);
  rows.push(
    [
      "status [location]",
      "every device as its gateway sees it (latch, door, item) and its broker link",
      "status",
    ],
    ["help", "this list", "help"],
  );
  const w = Math.max(...rows.map((r) => r[0].length));
  const lines = [
    `Hardware commands (location codes: ${locations.map((l) => l.code).join(", ")}; case does not matter):`,
    ...rows.flatMap(([u, what, ex]) => [
      `  ${u.padEnd(w)}  ${what}`,
      ...(ex ? [`  ${"".padEnd(w)}    e.g. ${ex}`] : []),
    ]),
    "A card may be written 04a1b2c3d4 or 04:A1:B2:C3:D4. What the gateways decide shows in the log.",
  ];
  return lines.join("\n");
}

/** Examples that work on the manifest at hand: its first door for doors and taps, first latch for turn. */
export function commandExamples(locations: ConsoleLocation[]): Partial<Record<HardwareCommand, string>> {
  const ex: Partial<Record<HardwareCommand, string>> = {};
  const door = locations.flatMap((l) =>
    l.devices.filter((d) => isDoorType(d.type)).map((d) => ({ l, d })),
  )[0];
  const doorOnBus = locations.flatMap((l) =>
    l.devices.filter((d) => isDoorType(d.type) && d.bus).map((d) => ({ l, d })),
  )[0];
  const latch = locations.flatMap((l) =>
    l.devices.filter((d) => !isDoorType(d.type) && d.bus).map((d) => ({ l, d })),
  )[0];
  const tamperAt = doorOnBus?.l ?? locations.find((l) => l.devices.some((d) => d.bus));
  if (door) ex.tap = `${door.l.code} tap ${door.d.alias} ${SAMPLE_CARD}`;
  if (doorOnBus) {
    ex.open = `${doorOnBus.l.code} open ${doorOnBus.d.alias}`;
    ex.close = `${doorOnBus.l.code} close ${doorOnBus.d.alias}`;
  }
  if (tamperAt) {
    ex.tamper = `${tamperAt.code} tamper`;
    ex.untamper = `${tamperAt.code} untamper`;
  }
  if (latch) ex.turn = `${latch.l.code} turn ${latch.d.alias} locked`;
  return ex;
}
