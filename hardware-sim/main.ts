/**
 * Standalone simulator (`npm run sim`): the same site as the tests use, but each bus and reader is a
 * pseudo-terminal the gateway opens with serialport like a USB adapter. A person plays the hardware from
 * stdin (tap a card, open a door, jam a latch, pull a cable).
 *
 *   npm run sim -- [--dir ./data/sim] [scenario.yaml|json]
 */
// First: on an unsupported Node this stops with what to run instead, before the rest loads.
import "../shared/node/supported-node.ts";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { Command } from "commander";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { EXIT } from "../shared/cli/exit-codes.ts";
import { exitQuietlyOnBrokenPipe } from "../shared/node/broken-pipe.ts";
import { parseCommandLine } from "../shared/node/command-line.ts";
import { packageVersion } from "../shared/node/version.ts";
import { brownout } from "./faults.ts";
import { PtyConnector } from "./links.ts";
import { createSimSite, type SimSite, SimSiteSpec } from "./site.ts";

const DEFAULT_SCENARIO: SimSiteSpec = {
  buses: {
    bus0: {
      boards: [
        { address: 1, channels: 8 },
        { address: 2, channels: 8 },
      ],
    },
  },
  readers: { "reader-1": {} },
};

const HELP = `commands:
  tap <reader> <uid>             a card held to a reader
  open <bus> <addr> <ch>         push a channel's door open (only if unlatched)
  close <bus> <addr> <ch>        shut a channel's door
  jam <bus> <addr> <ch>          jam a latch (unjam <bus> <addr> <ch> frees it)
  brownout <bus> <addr> <ms>     the board loses power for ms, then reports reset
  sleep <bus> <addr> <ch> <how>  a channel falls asleep; <how>: light or deep
  wake <bus> <addr> <ch>         a local interaction wakes a sleeping channel
  unplug <reader|bus>            pull a cable (the gateway's port closes)
  plug <reader|bus>              plug it back in
  status                         print every channel's state
  help`;

/** A scenario file that cannot be used (exit 6, like an invalid config). */
class ScenarioError extends Error {}

function loadScenario(path: string | undefined): SimSiteSpec {
  if (!path) return DEFAULT_SCENARIO;
  if (!existsSync(path)) throw new ScenarioError(`no scenario file at ${path}`);
  let data: unknown;
  try {
    data = parseYaml(readFileSync(path, "utf8"));
  } catch (err) {
    throw new ScenarioError(`scenario ${path}: ${(err as Error).message}`);
  }
  const parsed = SimSiteSpec.safeParse(data);
  if (!parsed.success)
    throw new ScenarioError(`scenario ${path} is invalid:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

const int = (s: string | undefined, what: string): number => {
  const n = Number(s);
  if (!Number.isInteger(n)) throw new Error(`${what} must be a whole number, got "${s ?? ""}"`);
  return n;
};

/** Runs one console command; returns what to print. */
async function runCommand(site: SimSite, line: string): Promise<string> {
  const [cmd, ...a] = line.trim().split(/\s+/);
  const board = () => site.board(a[0] ?? "", int(a[1], "address"));
  const pluggable = (name: string | undefined) =>
    site.readers.get(name ?? "") ?? site.buses.get(name ?? "") ?? site.reader(name ?? "");
  switch (cmd) {
    case undefined:
    case "":
      return "";
    case "tap":
      site.reader(a[0] ?? "").tap(a[1] ?? "");
      return `tapped ${a[1]} on ${a[0]}`;
    case "open":
      return board().openDoor(int(a[2], "channel")) ? "door open" : "door is latched, it stays shut";
    case "close":
      board().closeDoor(int(a[2], "channel"));
      return "door closed";
    case "jam":
    case "unjam":
      board().setJammed(int(a[2], "channel"), cmd === "jam");
      return cmd === "jam" ? "latch jammed" : "latch freed";
    case "brownout":
      board().use(brownout(int(a[2], "ms")));
      return "board browned out";
    case "sleep": {
      const depth = a[3];
      if (depth !== "light" && depth !== "deep") return 'sleep needs a depth: "light" or "deep"';
      board().sleep(int(a[2], "channel"), depth);
      return `channel in ${depth} sleep`;
    }
    case "wake":
      return board().wake(int(a[2], "channel")) ? "channel awake" : "channel was awake";
    case "unplug":
      await pluggable(a[0]).unplug();
      return `${a[0]} unplugged`;
    case "plug":
      await pluggable(a[0]).plugIn();
      return `${a[0]} plugged in`;
    case "status":
      return describe(site);
    case "help":
      return HELP;
    default:
      return `unknown command "${cmd}"; type help`;
  }
}

function describe(site: SimSite): string {
  const out: string[] = [];
  for (const bus of site.buses.values()) {
    for (const b of bus.boards) {
      for (let ch = 1; ch <= b.channelCount; ch++) {
        const c = b.channel(ch);
        const flags = [
          c.doorOpen && "door open",
          c.itemPresent && "item",
          c.jammed && "JAMMED",
          c.tamper && "TAMPER",
          b.sleepState(ch) !== "awake" && `${b.sleepState(ch)} sleep`,
        ];
        out.push(`${bus.name} ${b.address}/${ch} ${c.latch} ${flags.filter(Boolean).join(" ")}`.trimEnd());
      }
    }
  }
  return out.join("\n");
}

const program = new Command("sim")
  .description(
    "Standalone hardware simulator: lock boards, readers and doors, each bus and reader on a pseudo-terminal " +
      "(socat) that a gateway opens like a USB serial adapter. You play the hardware on stdin.",
  )
  .argument(
    "[scenario]",
    "scenario file (YAML or JSON, hardware-sim/site.ts SimSiteSpec); default: bus0 with boards 1 and 2 (8 channels each), reader-1",
  )
  .option("--dir <dir>", "directory for the pseudo-terminal links (one per bus and reader)", "./data/sim")
  .option("--scenario <file>", "the scenario file, as an option")
  .version(packageVersion(), "-V, --version", "print the version")
  .helpOption("-h, --help", "show this help")
  .addHelpText(
    "after",
    `
Console (stdin), once it says ready:
${HELP.replace(/^commands:\n/, "")}

Examples:
  $ npm run sim
  $ npm run sim -- --dir ./data/sim demo/standalone/gw-cs-lockers.sim.yaml
  (then put the printed paths, e.g. ./data/sim/bus0, in a gateway config's buses[].path)

Exit codes: 0 stopped (SIGINT/SIGTERM), 1 start-up failure (e.g. socat missing), 2 usage error, 6 invalid scenario.`,
  );

async function main(): Promise<void> {
  const ended = parseCommandLine(program);
  if (ended !== null) process.exit(ended);
  const values = program.opts<{ dir: string; scenario?: string }>();
  const dir = resolve(values.dir);
  mkdirSync(dir, { recursive: true });
  const spec = loadScenario(values.scenario ?? program.args[0]);
  const ptys = new Map<string, PtyConnector>();
  const site = createSimSite(spec, {
    connector: (name, baud) => {
      const c = new PtyConnector(dir, name, baud);
      ptys.set(name, c);
      return c;
    },
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`hardware-sim: ${signal}, closing`);
    await site.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));

  try {
    await site.ready;
  } catch (err) {
    await site.close();
    throw err;
  }
  for (const [name, bus] of site.buses) {
    const addrs = bus.boards.map((b) => `${b.address} (${b.channelCount} ch)`).join(", ");
    console.log(`hardware-sim: bus ${name} at ${ptys.get(name)?.hostPath} — boards ${addrs}`);
  }
  for (const name of site.readers.keys())
    console.log(`hardware-sim: reader ${name} at ${ptys.get(name)?.hostPath}`);
  for (const name of site.doors.keys()) console.log(`hardware-sim: door ${name} (GPIO lines in memory only)`);
  console.log('hardware-sim: ready; type "help" for commands');

  // Commands run one at a time so "unplug" then "plug" cannot race each other.
  let queue = Promise.resolve();
  createInterface({ input: process.stdin }).on("line", (line) => {
    queue = queue.then(async () => {
      try {
        const reply = await runCommand(site, line);
        if (reply) console.log(reply);
      } catch (err) {
        console.log(`error: ${(err as Error).message}`);
      }
    });
  });
}

exitQuietlyOnBrokenPipe();
main().catch((err: unknown) => {
  console.error(`hardware-sim: ${(err as Error).message}`);
  process.exit(err instanceof ScenarioError ? EXIT.checkFailed : EXIT.unexpected);
});
