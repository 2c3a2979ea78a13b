/**
 * The demo's hardware console (`npm start` reads it on standard input): a person plays the simulated
 * hardware of a location — a card on a door's reader, a door pushed open, a tamper switch — addressed by
 * location code and device alias as the manifest names them. `runLine` takes one line and returns what to
 * print, so tests drive it without a terminal; `attachDemoConsole` (console-input.ts) feeds it lines from a
 * stream. The commands and their help are in console-help.ts, the locations in console-locations.ts, the
 * status table in console-status.ts.
 */
import { didYouMean } from "../shared/cli/did-you-mean.ts";
import { maskCardId, normaliseCardId } from "../shared/domain/card-id.ts";
import {
  ALL_COMMANDS,
  commandExamples,
  GLOBAL_COMMANDS,
  HARDWARE_COMMANDS,
  type HardwareCommand,
  helpText,
  SAMPLE_CARD,
  USAGE,
} from "./console-help.ts";
import {
  type ConsoleDemo,
  type ConsoleDevice,
  ConsoleError,
  type ConsoleLocation,
  consoleLocations,
  firstWired,
  listOf,
  type RunDevice,
} from "./console-locations.ts";
import { consoleStatus } from "./console-status.ts";
import { DEMO_BUS, demoReaderName, isDoorType } from "./demo-wiring.ts";

export type DemoConsole = {
  /** Runs one line; resolves to the text to print ("" for a blank line). Never rejects. */
  runLine(line: string): Promise<string>;
  /** The example the banner shows: a tap at the demo's first door. */
  example: string;
  /**
   * One hardware command, already split (the console panel's acts): what `runLine` prints for it, or a
   * ConsoleError a person can act on.
   */
  play(code: string, cmd: HardwareCommand, args: string[]): string;
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

  const status = (code: string | undefined) =>
    consoleStatus(demo, code === undefined ? locations : [locationOr(code)]);

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
    play: (code, cmd, args) => hardware(locationOr(code), cmd, args),
    async runLine(line) {
      try {
        return await run(line);
      } catch (err) {
        return `error: ${err instanceof Error ? err.message : String(err)}`;
      }
    },
  };
}
