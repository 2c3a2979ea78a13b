import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { attachDemoConsole, DEMO_PROMPT, inBackgroundOfTerminal } from "../../demo/console-input.ts";
import { REPO_ROOT, type RunningDemo, startDemo } from "../../demo/demo.ts";
import { createDemoConsole, type DemoConsole } from "../../demo/demo-console.ts";
import type { RunningGateway } from "../../gateway/gateway.ts";
import { eventually } from "../support/eventually.ts";

/**
 * The demo's hardware console (`npm start` reads it on stdin): each line plays the simulated hardware of a
 * location, and the effects are what the gateways and the cloud really see. The demo runs in this process
 * on free ports with its DATA_DIR in a temporary directory, as in demo-parkctl.test.ts.
 */
let dataDir: string;
let demo: RunningDemo;
let hw: DemoConsole;

const gateway = (id: string): RunningGateway => {
  const g = demo.gateways.gateways.find((x) => x.config.gateway_id === id);
  if (!g) throw new Error(`no gateway ${id}`);
  return g;
};

/** A device as its gateway sees it, once the cloud's device map has arrived. */
async function seen(gatewayId: string, alias: string) {
  const d = (await gateway(gatewayId).control.devices()).find((x) => x.alias === alias);
  expect(d, `${alias} on ${gatewayId}`).toBeDefined();
  return d as NonNullable<typeof d>;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "demo-console-"));
  demo = await startDemo({
    env: { PORT: "0", MQTT_PORT: "0", DATA_DIR: dataDir, HOST: "127.0.0.1" },
    log: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
  });
  hw = createDemoConsole(demo);
  // Every gateway drives its devices once the cloud's device map has arrived over the broker.
  await eventually(async () => {
    for (const g of demo.gateways.gateways) expect((await g.control.devices()).length).toBeGreaterThan(0);
  }, 15_000);
});
afterAll(async () => {
  await demo?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("the demo's hardware console", () => {
  it("opens and shuts a free locker's door, and the gateway reports the door each time", async () => {
    expect(await hw.runLine("CS-L open 1")).toBe("CS-L 1: door open");
    await eventually(async () => expect((await seen("gw-cs-lockers", "1")).door_open).toBe(true));
    expect(await hw.runLine("CS-L open 1")).toBe("CS-L 1: the door is already open");
    expect(await hw.runLine("cs-l CLOSE 1")).toBe("CS-L 1: door closed");
    await eventually(async () => expect((await seen("gw-cs-lockers", "1")).door_open).toBe(false));
  });

  it("keeps a locked door shut, and a door unlocked by hand opens, then locks again as it closes", async () => {
    const shut = await hw.runLine("HB-H open door-north");
    expect(shut).toMatch(/^HB-H door-north: the lock is engaged, the door stays shut/);
    // Read at start-up (the gateway may still be reading it on a busy machine): the door is shut.
    await eventually(async () => expect((await seen("gw-hb-house", "door-north")).door_open).toBe(false));

    expect(await hw.runLine("HB-H turn door-north unlocked")).toBe(
      "HB-H door-north: latch turned by hand, now unlocked",
    );
    await eventually(async () => expect((await seen("gw-hb-house", "door-north")).latch).toBe("unlocked"));
    expect(await hw.runLine("HB-H open door-north")).toBe("HB-H door-north: door open");
    await eventually(async () => expect((await seen("gw-hb-house", "door-north")).door_open).toBe(true));

    expect(await hw.runLine("HB-H close door-north")).toBe(
      "HB-H door-north: door closed (its lock engages again)",
    );
    await eventually(async () =>
      expect(await seen("gw-hb-house", "door-north")).toMatchObject({ door_open: false, latch: "locked" }),
    );
  });

  it("trips a tamper switch: the cloud records a tamper hardware event from the board channel", async () => {
    expect(await hw.runLine("HB-H tamper")).toBe(
      "HB-H door-north: tamper switch (board 3 channel 1) tripped",
    );
    await eventually(async () => {
      const rows = (await hardwareReportRepository(demo.cloud.db).eventsOf("gw-hb-house")).filter(
        (r) => r.event === "tamper",
      );
      expect(rows.map((r) => r.source)).toEqual(["bus0/3/1"]);
      expect(rows[0]?.device_id).toBe((await seen("gw-hb-house", "door-north")).device_id);
    });
    expect(await hw.runLine("HB-H tamper door-north")).toBe(
      "HB-H door-north: tamper switch (board 3 channel 1) already tripped",
    );
    expect(await hw.runLine("HB-H untamper")).toBe(
      "HB-H door-north: tamper switch (board 3 channel 1) back at rest",
    );
    expect(
      demo.gateways.sims[demo.gateways.gateways.indexOf(gateway("gw-hb-house"))]?.board("bus0", 3).channel(1)
        .tamper,
    ).toBe(false);
    expect(await hw.runLine("HB-H tamper door-south")).toBe(
      "HB-H door-south: tamper switch (board 3 channel 2) tripped",
    );
    await hw.runLine("HB-H untamper door-south");
  });

  it("holds a card to a door's reader: the gateway receives the normalised card id from that reader", async () => {
    const taps: [string, string][] = [];
    const off = gateway("gw-hb-house").onTap((reader, card) => taps.push([reader, card]));
    try {
      const reply = await hw.runLine("HB-H tap door-north 04:A1:B2:C3:D4");
      expect(reply).toBe("HB-H door-north: card ****c3d4 held to the reader");
      await eventually(() => expect(taps).toEqual([["door-north", "04a1b2c3d4"]]));
      await hw.runLine("hb-h tap DOOR-SOUTH 0a0b");
      await eventually(() => expect(taps).toContainEqual(["door-south", "0a0b"]));
    } finally {
      off();
    }
    // The other bike house has its own reader at its door.
    const pk: string[] = [];
    const offPk = gateway("gw-pk-house").onTap((reader, card) => pk.push(`${reader} ${card}`));
    try {
      await hw.runLine("PK-H tap door 1234");
      await eventually(() => expect(pk).toEqual(["door 1234"]));
    } finally {
      offPk();
    }
  });

  it("opens a bike-house door for a member's card from the demo whitelist, and not for the blocked card", async () => {
    const hb = gateway("gw-hb-house");
    const decisions: { card: string; granted: boolean; reason: string }[] = [];
    const off = hb.onAccess((d) => decisions.push({ card: d.card_id, granted: d.granted, reason: d.reason }));
    try {
      // The whitelist reaches the gateway's key cache through the cloud's sync.
      await eventually(async () => expect((await hb.control.status()).keys.grants).toBe(4), 15_000);
      await hw.runLine("HB-H tap door-north 04a1b2c3d4");
      await eventually(() =>
        expect(decisions).toContainEqual({ card: "04a1b2c3d4", granted: true, reason: "whitelisted" }),
      );
      await eventually(async () => expect((await seen("gw-hb-house", "door-north")).latch).toBe("unlocked"));
      await hw.runLine("HB-H tap door-south 04deadbeef");
      await eventually(() =>
        expect(decisions).toContainEqual({ card: "04deadbeef", granted: false, reason: "inactive" }),
      );
    } finally {
      off();
    }
  });

  it("answers a mistake with one line: what is wrong, a suggestion and the valid choices", async () => {
    const cases: [string, RegExp][] = [
      [
        "HB-X tap door-north 04a1b2c3d4",
        /^error: unknown location or command "HB-X" \(did you mean "HB-H"\?\); locations: CS-L, MS-D, HB-H, PK-H;/,
      ],
      [
        "HB-H tap door-nort 04a1b2c3d4",
        /^error: HB-H has no device "door-nort" \(did you mean "door-north"\?\); devices with a reader: door-north, door-south$/,
      ],
      [
        "HB-H tap 1 04a1b2c3d4",
        /^error: HB-H 1 is a LOCKER without a reader; devices with a reader: door-north, door-south$/,
      ],
      [
        "HB-H tapp door-north 04a1b2c3d4",
        /^error: unknown command "tapp" \(did you mean "tap"\?\); commands: tap, open, close, tamper, untamper, turn/,
      ],
      ["stauts", /^error: unknown location or command "stauts" \(did you mean "status"\?\)/],
      [
        "tap door-north 04a1b2c3d4",
        /^error: name the location first: .* e\.g\. HB-H tap door-north 04a1b2c3d4$/,
      ],
      ["HB-H tap door-north 04a1b", /^error: "04a1b" is not a card id/],
      [
        "HB-H tap door-north",
        /^error: usage: HB-H tap <door> <card>, e\.g\. HB-H tap door-north 04a1b2c3d4$/,
      ],
      [
        "HB-H open door-nroth",
        /^error: HB-H has no device "door-nroth" \(did you mean "door-north"\?\); devices with a door on the lock bus: door-north, door-south, 1, 2, 3$/,
      ],
      ["HB-H turn 1 sideways", /^error: usage: HB-H turn <device> locked\|unlocked/],
      ["status XY-Z", /^error: unknown location "XY-Z"; locations: CS-L, MS-D, HB-H, PK-H$/],
    ];
    for (const [line, expected] of cases) {
      const reply = await hw.runLine(line);
      expect(reply, line).toMatch(expected);
      expect(reply.split("\n"), line).toHaveLength(1);
    }
    expect(await hw.runLine("   ")).toBe("");
  });

  it("prints every location's devices as its gateway sees them, with the broker link", async () => {
    const out = await hw.runLine("status");
    expect(out).toContain("HB-H  Harbour bike house");
    expect(out).toContain("gateway gw-hb-house: broker connected");
    expect(out).toMatch(/door-south\s+BIKE_HOUSE_DOOR\s+latch locked\s+door shut/);
    expect(out).toMatch(/\n {4}1\s+LOCKER\s+latch unlocked\s+door shut\s+item no/);
    expect(out).toMatch(/gw-hb-house\s+GUARD\s+the gateway itself/);
    for (const id of ["gw-cs-lockers", "gw-ms-docks", "gw-pk-house"]) expect(out).toContain(`gateway ${id}:`);
    const one = await hw.runLine("hb-h status");
    expect(one).toContain("gateway gw-hb-house");
    expect(one).not.toContain("gw-cs-lockers");
  });

  it("reads commands from a stream, one line at a time, and its end leaves the demo running", async () => {
    const input = new PassThrough();
    let output = "";
    attachDemoConsole(hw, input, { write: (t: string) => (output += t) });
    input.end("help\nHB-H nope\n");
    await eventually(() => expect(output).toContain('error: unknown command "nope"'));
    expect(output.indexOf("Hardware commands")).toBeLessThan(output.indexOf("error:"));
    expect((await fetch(`${demo.cloud.baseUrl}/healthz`)).status).toBe(200);
  });

  it("on a terminal, shows a prompt at the start and after every answer", async () => {
    const input = new PassThrough();
    let output = "";
    attachDemoConsole(hw, input, { write: (t: string) => (output += t) }, { prompt: DEMO_PROMPT });
    expect(output).toBe(DEMO_PROMPT);
    input.end("\nHB-H nope\n");
    // A blank line gets the prompt again; an answer is followed by it.
    await eventually(() => expect(output).toMatch(/\n\S.*> $/));
    expect(output).toMatch(/^demo> demo> error: unknown command "nope".*\ndemo> $/);
  });

  it("lists every command in help, each with an example that works on the demo", async () => {
    const help = await hw.runLine("help");
    for (const usage of [
      "<location> tap <door> <card>",
      "<location> open <door>",
      "<location> close <door>",
      "<location> tamper [device]",
      "<location> untamper [device]",
      "<location> turn <device> locked|unlocked",
      "status [location]",
      "help",
    ])
      expect(help).toContain(usage);
    expect(hw.example).toBe("HB-H tap door-north 04a1b2c3d4");
    const examples = [...help.matchAll(/e\.g\. (.+)$/gm)].map((m) => m[1] as string);
    expect(examples).toEqual([
      "HB-H tap door-north 04a1b2c3d4",
      "HB-H open door-north",
      "HB-H close door-north",
      "HB-H tamper",
      "HB-H untamper",
      "CS-L turn 1 locked",
      "status",
      "help",
    ]);
    for (const ex of examples) expect(await hw.runLine(ex), ex).not.toMatch(/^error/);
  });
});

describe("background detection (npm start &)", () => {
  it("reads the process and terminal foreground groups from /proc/<pid>/stat", () => {
    const stat = (pgrp: number, tpgid: number) =>
      `4242 (node (a) b) S 1 ${pgrp} ${pgrp} 34816 ${tpgid} 4194560 0 0 0 0`;
    expect(inBackgroundOfTerminal(stat(100, 200))).toBe(true);
    expect(inBackgroundOfTerminal(stat(100, 100))).toBe(false);
    expect(inBackgroundOfTerminal(stat(100, -1))).toBe(false);
  });
});

describe("npm start with commands on a pipe", () => {
  let child: ChildProcess | null = null;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "demo-console-pipe-"));
  });
  afterEach(() => {
    if (child?.pid && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    child = null;
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("answers printf 'status\\n' | npm start, keeps running after stdin ends and stops on SIGTERM", async () => {
    const proc = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "demo/main.ts")], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        PORT: "0",
        MQTT_PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dir,
        LOG_LEVEL: "warn",
        LOG_FORMAT: "json",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child = proc;
    let out = "";
    let err = "";
    proc.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    proc.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((res) => proc.once("exit", (code) => res(code)));
    proc.stdin?.end("status\n");

    await eventually(() => expect(out, err).toContain("gateway gw-hb-house: broker"), 30_000, 50);
    expect(out).toContain('Type "help" for hardware commands (e.g. HB-H tap door-north 04a1b2c3d4).');
    expect(out.indexOf("Parking cloud demo is running.")).toBeLessThan(out.indexOf('Type "help"'));
    const base = /API base URL\s+(\S+)/.exec(out)?.[1];
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // stdin has ended, and the demo still answers.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(proc.exitCode).toBeNull();
    proc.kill("SIGTERM");
    expect(await exited).toBe(0);
    // A normal stop warns of nothing and prints no stack trace (LOG_LEVEL=warn shows any warning).
    const all = `${out}${err}`;
    const problem = /"level":(40|50|60)|"stack"|\n\s+at /.exec(all);
    expect(problem && all.slice(Math.max(0, problem.index - 300), problem.index + 300)).toBeNull();
  });
});
