/**
 * A whole simulated site from a plain object (a scenario file, or a test's literal): lock buses with their
 * boards, RFID readers, doors on GPIO, a camera. In-memory by default, where `linkFactory` is the
 * gateway's SerialLinkFactory for `sim://<name>` paths; main.ts passes pty connectors instead.
 */
import type { Duplex } from "node:stream";
import { z } from "zod";
import { BAUD_RATE, MAX_ADDRESS, MIN_ADDRESS } from "../shared/protocol/lock-bus/constants.ts";
import { READER_BAUD_RATE } from "../shared/protocol/rfid-reader/reader-line.ts";
import { LockBus } from "./bus.ts";
import { SimCamera } from "./camera.ts";
import { SimDoor } from "./door.ts";
import { SimGpioBank } from "./gpio-lines.ts";
import { type Connector, MemoryConnector } from "./links.ts";
import { LockBoard } from "./lock-controller.ts";
import { SimReader } from "./rfid-reader.ts";
import type { SimTimers } from "./timers.ts";

// Names become file names in pty mode, so keep them path-safe.
const Name = z.string().regex(/^[A-Za-z0-9_.-]+$/, "letters, digits, '.', '_' and '-' only");

const BoardSpec = z.strictObject({
  address: z.number().int().min(MIN_ADDRESS).max(MAX_ADDRESS),
  channels: z.number().int().min(1).max(64).default(8),
  firmware: z
    .string()
    .regex(/^\d{1,3}\.\d{1,3}$/, "major.minor")
    .optional(),
  /** Channels that are door locks (honour UNLOCK's hold seconds). */
  doors: z.array(z.number().int().min(1).max(64)).default([]),
  moveMs: z.number().int().min(0).optional(),
  /** Where locker and dock latches are at power-up (door locks always start locked). */
  latch: z.enum(["locked", "unlocked"]).default("locked"),
  /**
   * Channels that save power (spec: power_save_strategy): `light` ones (REMOTE_WAKEUP) wake on a request,
   * `deep` ones (LOCAL_WAKEUP) only on a local interaction; both doze off after `idleMs` without activity
   * (none: only when a test or the console puts them to sleep). A request wakes a light sleeper in `wakeMs`.
   */
  powerSave: z
    .strictObject({
      light: z.array(z.number().int().min(1).max(64)).default([]),
      deep: z.array(z.number().int().min(1).max(64)).default([]),
      idleMs: z.number().int().positive().optional(),
      wakeMs: z.number().int().min(0).default(800),
    })
    .optional(),
});

/** The scenario schema (main.ts validates YAML/JSON files with it; a bad file names the key). */
export const SimSiteSpec = z.strictObject({
  /** Default latch movement time for every board; 300 ms unless set. */
  moveMs: z.number().int().min(0).default(300),
  buses: z
    .record(
      Name,
      z.strictObject({
        boards: z
          .array(BoardSpec)
          .min(1)
          .refine(
            (bs) => new Set(bs.map((b) => b.address)).size === bs.length,
            "board addresses must be unique",
          ),
      }),
    )
    .default({}),
  readers: z
    .record(
      Name,
      z.strictObject({
        model: z.string().regex(/^\S+$/).optional(),
        firmware: z.string().regex(/^\S+$/).optional(),
        aliveMs: z.union([z.number().int().positive(), z.literal(false)]).optional(),
        /** The lock channel this reader belongs to: a tap on it is a local interaction that wakes it. */
        wakes: z
          .strictObject({
            bus: Name,
            board: z.number().int().min(MIN_ADDRESS).max(MAX_ADDRESS),
            channel: z.number().int().min(1).max(64),
          })
          .optional(),
      }),
    )
    .default({}),
  doors: z.array(Name).default([]),
  /** Extra GPIO lines (e.g. "tamper", "power_relay:reader-1") → initial logical value. */
  gpio: z.record(z.string().min(1), z.boolean()).default({}),
});
export type SimSiteSpec = z.input<typeof SimSiteSpec>;

export type SimSiteOptions = {
  /** How each bus/reader reaches the host; default in-memory (`linkFactory`). */
  connector?: (name: string, baudRate: number) => Connector;
  /** Timers for boards and readers (a test's fake clock); default real, unref'd. */
  timers?: SimTimers;
};

export type SimSite = {
  buses: ReadonlyMap<string, LockBus>;
  readers: ReadonlyMap<string, SimReader>;
  doors: ReadonlyMap<string, SimDoor>;
  gpio: SimGpioBank;
  camera: SimCamera;
  /** How each bus/reader is reached: `sim://<name>` in memory, or whatever the connector says. */
  connectors: ReadonlyMap<string, Connector>;
  bus(name: string): LockBus;
  board(bus: string, address: number): LockBoard;
  reader(name: string): SimReader;
  door(name: string): SimDoor;
  /** A SerialLinkFactory: the host end of a fresh in-memory cable to `sim://<name>`. */
  linkFactory(path: string, baudRate?: number): Promise<Duplex>;
  /** Settles once every bus and reader is plugged in (immediate in memory; socat start-up in pty mode). */
  ready: Promise<void>;
  close(): Promise<void>;
};

export const SIM_SCHEME = "sim://";

export function createSimSite(input: SimSiteSpec, opts: SimSiteOptions = {}): SimSite {
  const spec = SimSiteSpec.parse(input);
  const connectorFor = opts.connector ?? ((name: string) => new MemoryConnector(`${SIM_SCHEME}${name}`));
  const connectors = new Map<string, Connector>();
  const claim = (name: string, baud: number) => {
    if (connectors.has(name)) throw new Error(`"${name}" names both a bus and a reader`);
    const c = connectorFor(name, baud);
    connectors.set(name, c);
    return c;
  };
  const plugging: Promise<void>[] = [];

  const buses = new Map<string, LockBus>();
  for (const [name, b] of Object.entries(spec.buses)) {
    const boards = b.boards.map(
      (bs) =>
        new LockBoard({
          address: bs.address,
          channels: bs.channels,
          firmware: bs.firmware,
          doors: bs.doors,
          latch: bs.latch,
          moveMs: bs.moveMs ?? spec.moveMs,
          powerSave: bs.powerSave,
          timers: opts.timers,
        }),
    );
    const bus = new LockBus(name, boards);
    buses.set(name, bus);
    plugging.push(bus.plugInto(claim(name, BAUD_RATE)));
  }

  const readers = new Map<string, SimReader>();
  for (const [name, { wakes, ...r }] of Object.entries(spec.readers)) {
    const reader = new SimReader(name, { ...r, timers: opts.timers });
    readers.set(name, reader);
    if (wakes) {
      const board = buses.get(wakes.bus)?.board(wakes.board);
      if (!board)
        throw new Error(`reader "${name}" wakes a channel on bus "${wakes.bus}", which this site lacks`);
      board.channel(wakes.channel); // throws for a channel the board does not have
      reader.onTap(() => board.wake(wakes.channel));
    }
    plugging.push(reader.plugInto(claim(name, READER_BAUD_RATE)));
  }

  const gpio = new SimGpioBank(spec.gpio);
  const doors = new Map(spec.doors.map((name) => [name, new SimDoor(gpio, name)] as const));
  const camera = new SimCamera();

  const pick = <T>(m: ReadonlyMap<string, T>, what: string, name: string): T => {
    const v = m.get(name);
    if (v === undefined) throw new Error(`no ${what} "${name}" in this site`);
    return v;
  };

  const ready = Promise.all(plugging).then(() => undefined);
  // Memory sites never fail to plug; a pty site's caller awaits `ready` and sees the error there.
  ready.catch(() => {});

  return {
    buses,
    readers,
    doors,
    gpio,
    camera,
    connectors,
    bus: (name) => pick(buses, "bus", name),
    board: (bus, address) => pick(buses, "bus", bus).board(address),
    reader: (name) => pick(readers, "reader", name),
    door: (name) => pick(doors, "door", name),
    linkFactory(path) {
      const name = path.startsWith(SIM_SCHEME) ? path.slice(SIM_SCHEME.length) : null;
      const c = name === null ? undefined : connectors.get(name);
      if (!(c instanceof MemoryConnector)) {
        return Promise.reject(new Error(`ENOENT: no simulated device at ${path}`));
      }
      // Plugging in is async even in memory; a gateway that opens at once must not see a missing device.
      return ready.then(() => c.open());
    },
    ready,
    async close() {
      await Promise.allSettled(plugging);
      await Promise.all([
        ...[...buses.values()].map((b) => b.close()),
        ...[...readers.values()].map((r) => r.close()),
      ]);
      for (const d of doors.values()) d.dispose();
      gpio.close();
    },
  };
}
