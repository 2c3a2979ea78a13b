import { afterEach, describe, expect, it } from "vitest";
import { commandRepository } from "../../cloud/commands/command-repository.ts";
import type { CommandRecord } from "../../cloud/store/command-record.ts";
import { Command } from "../../shared/api/command.ts";
import { Device } from "../../shared/api/device.ts";
import { ISSUER, TOKEN_SECRET } from "../support/cloud-harness.ts";
import { type CloudProcess, startCloudProcess } from "../support/cloud-process.ts";
import { eventually } from "../support/eventually.ts";
import { CLIENTS, fx, OP_A, OP_B, SECRET } from "../support/fixture-site.ts";
import { type Site, startSite } from "../support/site-harness.ts";
import { replicaDatabaseUrl } from "../support/test-db.ts";

/**
 * Two replicas of the cloud behind no balancer but the test itself: the site harness's cloud (in process)
 * and `cloud/main.ts` as a process of its own, on one PostgreSQL store and one Mosquitto, in one
 * shared-subscription group, with one gateway on simulated hardware. Commands go through both; the
 * process is killed (SIGKILL) while they are in flight. Nothing may be lost: every command ends, as the
 * hardware says, and every device shows what its latch holds.
 */
const GROUP = "parking-cloud";
/** Board 1's lockers without a power-save strategy: the fixture's 1–3 and three added on channels 6–8. */
const ALIASES = ["1", "2", "3", "6", "7", "8"];
const TERMINAL = new Set(["SUCCESS", "ERROR"]);

/** Every command of the fixture site's operators, as the command repository reads it. */
async function everyCommand(s: Site): Promise<CommandRecord[]> {
  const commands = commandRepository(s.db);
  return [...(await commands.ofOperator(OP_A)), ...(await commands.ofOperator(OP_B))];
}

describe("two cloud replicas, one killed mid-flight", () => {
  let site: Site | null = null;
  let other: CloudProcess | null = null;
  afterEach(async () => {
    await other?.stop();
    await site?.stop();
    other = null;
    site = null;
  });

  it("loses no command: each ends once, as the hardware did it, and the survivor takes all", {
    timeout: 120_000,
  }, async () => {
    site = await startSite({
      broker: "mosquitto",
      serial: "memory",
      store: "postgres",
      shareGroup: GROUP,
      manifest: (m) =>
        m.operators[0]?.locations?.[0]?.gateways?.[0]?.devices?.push(
          ...["6", "7", "8"].map((alias) => ({
            alias,
            type: "LOCKER" as const,
            bus: { board: 1, channel: Number(alias) },
          })),
        ),
    });
    const s = site;
    await s.settled();
    other = await startCloudProcess({
      DATABASE_URL: replicaDatabaseUrl(s.store),
      MQTT_URL: s.brokerUrl,
      MQTT_PREFIX: s.prefix,
      // A user (hence client id) of its own: a second login under the in-process replica's would end it.
      MQTT_USERNAME: "cloud-2",
      MQTT_PASSWORD: "cloud-2-password",
      MQTT_SHARE_GROUP: GROUP,
      TOKEN_SECRET: new TextDecoder().decode(TOKEN_SECRET),
      AUTH_URL: ISSUER,
    });
    const base = other.baseUrl;

    // One token secret: a token the process issued is good at the in-process replica, and back.
    const issued = await fetch(`${base}/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `grant_type=client_credentials&client_id=${CLIENTS.admin}&client_secret=${SECRET}`,
    });
    expect(issued.status).toBe(200);
    const token = ((await issued.json()) as { access_token: string }).access_token;
    const crossed = await s.app.inject({
      method: "GET",
      url: `/device/v1/devices/${fx.device("L1", "1")}`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(crossed.statusCode).toBe(200);

    const viaProcess = (alias: string, command: string) =>
      fetch(`${base}/device/v1/devices/${fx.device("L1", alias)}/commands`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ command }),
      }).then(async (r) => (r.status === 200 ? Command.parse(await r.json()) : null));
    const viaHarness = async (alias: string, command: string) => {
      const res = await s.api("POST", `/device/v1/devices/${fx.device("L1", alias)}/commands`, { command });
      expect(res.statusCode, res.body).toBe(200);
      return Command.parse(res.json());
    };

    // Locks through both at once; the process dies as soon as its first answer is back, while the
    // gateway's progress reports are on their way to either replica (and its other requests may be too).
    const proc = other;
    const fromProcess = ["6", "7", "8"].map((a) => viaProcess(a, "lock").catch(() => null));
    const fromHarness = ["1", "2", "3"].map((a) => viaHarness(a, "lock"));
    await Promise.race(fromProcess);
    await proc.kill();
    const answered = [...(await Promise.all(fromHarness)), ...(await Promise.all(fromProcess))].filter(
      (c): c is Command => c !== null,
    );
    expect(answered.length).toBeGreaterThanOrEqual(4);

    // The gateway sends again whatever the dead replica took and never acknowledged (outbox_resend_s: 1).
    await eventually(async () => expect((await s.status()).outbox.pending).toBe(0), 30_000);
    // A command the process made but never handed to the broker ends at its delivery deadline.
    await eventually(async () => {
      const rows = await everyCommand(s);
      expect(rows.every((r) => TERMINAL.has(r.state.value) || r.state.value === "NOT_SENT")).toBe(true);
    }, 30_000);
    s.clock.jump(31_000);
    const commands = await eventually(async () => {
      const rows = await everyCommand(s);
      expect(rows.map((r) => r.state.value).filter((v) => !TERMINAL.has(v))).toEqual([]);
      return rows;
    }, 20_000);

    // Every answered command is there; the answered ones all did what they asked (the hardware is fine).
    const ended = new Map(commands.map((c) => [c.id, c]));
    for (const c of answered) expect(ended.get(c.id)?.state.value).toBe("SUCCESS");
    // Each ended once, its history whole and in order (a RECEIVED the dead replica took came again
    // after the outcome, and still takes its place), nothing applied twice.
    for (const c of commands) {
      const names = c.events.map((e) => e.name);
      if (c.state.value === "SUCCESS")
        expect(names).toEqual([
          "REQUEST_INITIATED",
          "REQUEST_SENT",
          "RESPONSE_COMMAND_RECEIVED",
          "RESPONSE_DEVICE_LOCKED",
        ]);
      else expect(names.filter((n) => n === "RESPONSE_ERROR" || n === "REQUEST_TIMED_OUT")).toHaveLength(1);
      expect(new Set(names).size).toBe(names.length);
    }
    await expectHardwareTruth(s);

    // The survivor alone carries on, including on the devices the dead replica commanded: each is
    // turned over (unlocked if locked, locked if a lost request left it open) and ends as asked.
    s.clock.jump(3_500); // past the per-device throttle of the locks above
    const wanted = new Map<string, "locked" | "unlocked">();
    for (const alias of ALIASES) {
      const was = s.sim.board("bus0", 1).channel(Number(alias)).latch;
      const turn = await viaHarness(alias, was === "locked" ? "unlock" : "lock");
      wanted.set(alias, was === "locked" ? "unlocked" : "locked");
      await eventually(async () => {
        const res = await s.api("GET", `/device/v1/commands/${turn.id}`);
        expect(Command.parse(res.json()).state.value).toBe("SUCCESS");
      });
    }
    await expectHardwareTruth(s);
    expect(ALIASES.map((a) => s.sim.board("bus0", 1).channel(Number(a)).latch)).toEqual(
      ALIASES.map((a) => wanted.get(a)),
    );
  });
});

/** Every locker's cloud state and lock reading are what its simulated latch holds. */
async function expectHardwareTruth(s: Site) {
  await eventually(async () => {
    for (const alias of ALIASES) {
      const latch = s.sim.board("bus0", 1).channel(Number(alias)).latch;
      const expected = latch === "locked" ? "LOCKED" : "UNLOCKED";
      const d = Device.parse((await s.api("GET", `/device/v1/devices/${fx.device("L1", alias)}`)).json());
      expect({ alias, state: d.state.value, lock_state: d.lock_state }).toEqual({
        alias,
        state: expected,
        lock_state: expected,
      });
    }
  });
}
