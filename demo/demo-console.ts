/**
 * The demo's hardware console (`npm start` reads it on standard input): a person plays the simulated
 * hardware of a location — a card on a door's reader, a door pushed open, a tamper switch — addressed by
 * location code and device alias as the manifest names them. `runLine` takes one line and returns what to
 * print, so tests drive it without a terminal; `attachDemoConsole` feeds it lines from a stream.
 */
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import type { RunningGateway } from "../gateway/gateway.ts";
import type { SimSite } from "../hardware-sim/site.ts";
import { didYouMean } from "../shared/cli/did-you-mean.ts";
import { maskCardId, normaliseCardId } from "../shared/domain/card-id.ts";
import { DEMO_BUS, demoReaderName, isDoorType } from "./demo-wiring.ts";

/** What the console needs of the running demo (demo/demo.ts RunningDemo has it). */
export type ConsoleDemo = {
  manifest: SiteManifest;
  gateways: { gateways: readonly RunningGateway[]; sims: readonly SimSite[] };
};

type ManifestDevice =
  SiteManifest["operators"][number]["locations"][number]["gateways"][number]["devices"][number];

/** A device of a location, with the simulated site and gateway that run it (null: not run by the demo). */
type ConsoleDevice = {
  alias: string;
  type: string;
  bus: { board: number; channel: number } | null;
  gatewayId: string;
  run: { gateway: RunningGateway; sim: SimSite } | null;
};

/** A device the demo runs. */
type RunDevice = ConsoleDevice & { run: NonNullable<ConsoleDevice["run"]> };

type ConsoleLocation = { code: string; label: string; gatewayIds: string[]; devices: ConsoleDevice[] };

const HARDWARE_COMMANDS = ["tap", "open", "close", "tamper", "untamper", "turn"] as const;
const GLOBAL_COMMANDS = ["status", "help"] as const;
const ALL_COMMANDS = [...HARDWARE_COMMANDS, ...GLOBAL_COMMANDS];
type HardwareCommand = (typeof HARDWARE_COMMANDS)[number];

const SAMPLE_CARD = "04a1b2c3d4";

/** A line the person can fix: printed as it is, never a stack trace. */
class ConsoleError extends Error {}

export type DemoConsole = {
  /** Runs one line; resolves to the text to print ("" for a blank line). Never rejects. */
  runLine(line: string): Promise<string>;
  /** The example the banner shows: a tap at the demo's first door. */
  example: string;
};

export function createDemoConsole(demo: ConsoleDemo): DemoConsole {
  const locations = consoleLocations(demo);
  const examples = commandExamples(locations);

  const findLocation = (code: string): ConsoleLocation | undefined =>
    locations.find((l) => l.code.toLowerCase() === code.toLowerCase());

  const findDevice = (
    loc: ConsoleLocation,
    alias: string,
    what: (d: ConsoleDevice) => boolean,
    kind: string,
  ) => {
    const fits = loc.devices.filter(what);
    const d =
      fits.find((x) => x.alias === alias) ?? fits.find((x) => x.alias.toLowerCase() === alias.toLowerCase());
    if (d) return running(d);
    const names = fits.map((x) => x.alias);
    const other = loc.devices.find((x) => x.alias.toLowerCase() === alias.toLowerCase());
    // A device that exists but cannot do this (a locker has no reader) is told apart from a typo.
    if (other)
      throw new ConsoleError(
        `${loc.code} ${other.alias} is a ${other.type} without ${kind}; ${listOf(kind, names)}`,
      );
    throw new ConsoleError(
      `${loc.code} has no device "${alias}"${didYouMean(alias, names)}; ${listOf(kind, names)}`,
    );
  };

  const running = (d: ConsoleDevice): RunDevice => {
    if (!d.run)
      throw new ConsoleError(
        `${d.gatewayId} is not run by the demo (DEMO_SKIP_GATEWAYS); play its hardware with npm run sim`,
      );
    return { ...d, run: d.run };
  };

  const boardOf = (d: RunDevice) => {
    if (!d.bus) throw new ConsoleError(`${d.alias} is not wired to a lock bus`);
    return { board: d.run.sim.board(DEMO_BUS, d.bus.board), ch: d.bus.channel };
  };

  const usage = (cmd: HardwareCommand, code: string) =>
    new ConsoleError(`usage: ${code} ${USAGE[cmd]}${examples[cmd] ? `, e.g. ${examples[cmd]}` : ""}`);

  function hardware(loc: ConsoleLocation, cmd: HardwareCommand, args: string[]): string {
    const where = (d: ConsoleDevice) => `${loc.code} ${d.alias}`;
    const wired = (d: ConsoleDevice) => d.bus !== null;
    switch (cmd) {
      case "tap": {
        if (args.length !== 2) throw usage(cmd, loc.code);
        const [alias, raw] = args as [string, string];
        const d = findDevice(loc, alias, (x) => isDoorType(x.type), "a reader");
        const card = normaliseCardId(raw);
        if (!card)
          throw new ConsoleError(
            `"${raw}" is not a card id: hex digits (':' or '-' between bytes allowed), whole bytes, at most 10 bytes, e.g. ${SAMPLE_CARD}`,
          );
        const reader = d.run.sim.readers.get(demoReaderName(d.alias));
        if (!reader) throw new ConsoleError(`${where(d)} has no simulated reader`);
        reader.tap(card);
        return `${where(d)}: card ${maskCardId(card)} held to the reader`;
      }
      case "open":
      case "close": {
        if (args.length !== 1) throw usage(cmd, loc.code);
        const d = findDevice(loc, args[0] as string, wired, "a door on the lock bus");
        const { board, ch } = boardOf(d);
        const state = board.channel(ch);
        if (cmd === "close") {
          if (!state.doorOpen) return `${where(d)}: the door is already shut`;
          board.closeDoor(ch);
          return `${where(d)}: door closed${isDoorType(d.type) ? " (its lock engages again)" : ""}`;
        }
        if (state.doorOpen) return `${where(d)}: the door is already open`;
        if (!board.openDoor(ch))
          return `${where(d)}: the lock is engaged, the door stays shut (unlock it first: a whitelisted card, the API or parkctl)`;
        return `${where(d)}: door open`;
      }
      case "tamper":
      case "untamper": {
        if (args.length > 1) throw usage(cmd, loc.code);
        const d =
          args[0] === undefined
            ? running(firstWired(loc))
            : findDevice(loc, args[0], wired, "a board channel");
        const { board, ch } = boardOf(d);
        const on = cmd === "tamper";
        const was = board.channel(ch).tamper;
        board.setTamper(ch, on);
        const switchAt = `${where(d)}: tamper switch (board ${board.address} channel ${ch})`;
        if (was === on) return `${switchAt} already ${on ? "tripped" : "at rest"}`;
        return `${switchAt} ${on ? "tripped" : "back at rest"}`;
      }
      case "turn": {
        const [alias, latch] = args;
        if (args.length !== 2 || (latch !== "locked" && latch !== "unlocked")) throw usage(cmd, loc.code);
        const d = findDevice(loc, alias as string, wired, "a latch on the lock bus");
        const { board, ch } = boardOf(d);
        if (board.channel(ch).latch === latch) return `${where(d)}: the latch is already ${latch}`;
        board.turnLatch(ch, latch);
        return `${where(d)}: latch turned by hand, now ${latch}`;
      }
    }
  }

  async function status(code: string | undefined): Promise<string> {
    const chosen = code === undefined ? locations : [locationOr(code)];
    const out: string[] = [];
    for (const loc of chosen) {
      out.push(`${loc.code}  ${loc.label}`);
      for (const gatewayId of loc.gatewayIds) {
        const run = runOf(demo, gatewayId);
        if (!run) {
          out.push(`  gateway ${gatewayId}: not run by the demo (DEMO_SKIP_GATEWAYS)`);
          continue;
        }
        const [st, devices] = await Promise.all([
          run.gateway.control.status(),
          run.gateway.control.devices(),
        ]);
        out.push(`  gateway ${gatewayId}: broker ${st.broker.connected ? "connected" : "NOT connected"}`);
        if (devices.length === 0) out.push("    (no device map from the cloud yet)");
        const width = Math.max(0, ...devices.map((d) => d.alias.length));
        const typeWidth = Math.max(0, ...devices.map((d) => d.type.length));
        for (const d of devices) {
          const cells =
            d.type === "GUARD"
              ? ["the gateway itself"]
              : [
                  `latch ${d.latch ?? "?"}`.padEnd(14),
                  `door ${d.door_open === null ? "?" : d.door_open ? "open" : "shut"}`.padEnd(9),
                  `item ${d.item_present === null ? "?" : d.item_present ? "yes" : "no"}`,
                  d.reachable ? "" : "  UNREACHABLE",
                ];
          out.push(
            `    ${d.alias.padEnd(width)}  ${d.type.padEnd(typeWidth)}  ${cells.join("  ")}`.trimEnd(),
          );
        }
      }
    }
    return out.join("\n");
  }

  function locationOr(code: string): ConsoleLocation {
    const loc = findLocation(code);
    if (loc) return loc;
    const codes = locations.map((l) => l.code);
    throw new ConsoleError(
      `unknown location "${code}"${didYouMean(code, codes)}; locations: ${codes.join(", ")}`,
    );
  }

  function run(line: string): string | Promise<string> {
    const words = line.trim().split(/\s+/).filter(Boolean);
    const [first, ...rest] = words;
    if (first === undefined) return "";
    const word = first.toLowerCase();
    if (word === "help") return helpText(locations, examples);
    if (word === "status") {
      if (rest.length > 1) throw new ConsoleError("usage: status [location], e.g. status HB-H");
      return status(rest[0]);
    }
    const loc = findLocation(first);
    if (!loc) {
      if ((HARDWARE_COMMANDS as readonly string[]).includes(word))
        throw new ConsoleError(
          `name the location first: <location> ${word} …, e.g. ${examples[word as HardwareCommand] ?? examples.tap}`,
        );
      const codes = locations.map((l) => l.code);
      throw new ConsoleError(
        `unknown location or command "${first}"${didYouMean(first, [...codes, ...GLOBAL_COMMANDS])}; locations: ${codes.join(", ")}; commands: ${ALL_COMMANDS.join(", ")} (type help)`,
      );
    }
    const [cmdWord, ...args] = rest;
    if (cmdWord === undefined)
      throw new ConsoleError(`${loc.code} what? commands: ${HARDWARE_COMMANDS.join(", ")} (type help)`);
    const cmd = cmdWord.toLowerCase();
    if (cmd === "status") return status(loc.code);
    if (!(HARDWARE_COMMANDS as readonly string[]).includes(cmd))
      throw new ConsoleError(
        `unknown command "${cmdWord}"${didYouMean(cmdWord, HARDWARE_COMMANDS)}; commands: ${HARDWARE_COMMANDS.join(", ")} (type help)`,
      );
    return hardware(loc, cmd as HardwareCommand, args);
  }

  return {
    example: examples.tap ?? `status`,
    async runLine(line) {
      try {
        return await run(line);
      } catch (err) {
        return `error: ${err instanceof Error ? err.message : String(err)}`;
      }
    },
  };
}

const USAGE: Record<HardwareCommand, string> = {
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

function helpText(locations: ConsoleLocation[], examples: Partial<Record<HardwareCommand, string>>): string {
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
function commandExamples(locations: ConsoleLocation[]): Partial<Record<HardwareCommand, string>> {
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

function firstWired(loc: ConsoleLocation): ConsoleDevice {
  const d = loc.devices.find((x) => x.bus !== null);
  if (!d) throw new ConsoleError(`${loc.code} has no device on a lock bus, so no tamper switch`);
  return d;
}

function listOf(kind: string, names: string[]): string {
  return names.length ? `devices with ${kind}: ${names.join(", ")}` : `none of its devices has ${kind}`;
}

/** The demo runs a simulated site per gateway it runs, in the same order (demo/demo-gateways.ts). */
function runOf(demo: ConsoleDemo, gatewayId: string): ConsoleDevice["run"] {
  const i = demo.gateways.gateways.findIndex((g) => g.config.gateway_id === gatewayId);
  const gateway = demo.gateways.gateways[i];
  const sim = demo.gateways.sims[i];
  return gateway && sim ? { gateway, sim } : null;
}

function consoleLocations(demo: ConsoleDemo): ConsoleLocation[] {
  const seen = new Set<string>();
  const out: ConsoleLocation[] = [];
  for (const op of demo.manifest.operators) {
    for (const loc of op.locations) {
      // Codes are unique per operator; the demo has one, and the first of a repeated code wins.
      if (seen.has(loc.code.toLowerCase())) continue;
      seen.add(loc.code.toLowerCase());
      out.push({
        code: loc.code,
        label: loc.label,
        gatewayIds: loc.gateways.map((gw) => gw.id),
        devices: loc.gateways.flatMap((gw) => {
          const run = runOf(demo, gw.id);
          return gw.devices.map((d: ManifestDevice) => ({
            alias: d.alias,
            type: d.type,
            bus: d.bus ?? null,
            gatewayId: gw.id,
            run,
          }));
        }),
      });
    }
  }
  return out;
}

/**
 * Feeds the console a line at a time from a stream (the demo's stdin, a TTY or a pipe) and writes each
 * answer; commands run one after the other. The end of the stream ends the console only: the demo runs on.
 * Returns a function that stops listening.
 */
export function attachDemoConsole(
  demoConsole: DemoConsole,
  input: Readable,
  output: { write(text: string): unknown },
): () => void {
  const rl = createInterface({ input, terminal: false });
  let queue = Promise.resolve();
  rl.on("line", (line) => {
    queue = queue.then(async () => {
      const reply = await demoConsole.runLine(line);
      if (reply) output.write(`${reply}\n`);
    });
  });
  // A stdin that cannot be read (closed, a terminal gone) only ends the console.
  input.on("error", () => rl.close());
  return () => rl.close();
}

/**
 * Whether this process runs in the background of its terminal (`npm start &`): reading the terminal
 * there would stop the whole demo (SIGTTIN), so the console stays off. Linux only; elsewhere false.
 */
export function inBackgroundOfTerminal(statText?: string): boolean {
  let text = statText;
  if (text === undefined) {
    try {
      text = readFileSync("/proc/self/stat", "utf8");
    } catch {
      return false;
    }
  }
  // Fields after the command name (which may hold spaces and parentheses): state ppid pgrp session tty_nr tpgid.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const pgrp = Number(fields[2]);
  const tpgid = Number(fields[5]);
  return Number.isInteger(pgrp) && Number.isInteger(tpgid) && tpgid > 0 && pgrp !== tpgid;
}
