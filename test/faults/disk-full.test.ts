import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alarmRepository } from "../../cloud/alarms/alarm-repository.ts";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { accessEventRepository } from "../../cloud/key-sync/access-event-repository.ts";
import { keySyncRepository } from "../../cloud/key-sync/key-sync-repository.ts";
import type { ManifestInput } from "../../cloud/manifest/manifest-schema.ts";
import { STORE_FULL_EVENT, STORE_FULL_REASON, STORE_FULL_TAP } from "../../gateway/features/store-full.ts";
import { fx } from "../support/fixture-site.ts";
import { type DaemonSite, startDaemonSite } from "./support/daemon.ts";

// The daemon's state directory on a 16 MB tmpfs that fills up while events, taps and commands flow: SQLite
// answers SQLITE_FULL; the daemon stays up, refuses what it cannot journal and says why, the cloud raises
// the gateway's storage alarm, and all resumes by itself once space returns.
const WL = "d15cf011-0000-4000-8000-000000000001";
const MEMBER = "04a1b2c3d4";
const LOCKER = fx.device("L1", "1");
const DOOR = fx.device("L1", "door"); // board 1 channel 6, behind reader-door
const SUBJECT = "gateway:gw-a1";

/** L1's door on gw-a1 with its reader, and a keys_only whitelist holding MEMBER. */
function manifest(m: ManifestInput) {
  const op = m.operators[0];
  const l1 = op?.locations?.[0];
  if (!op || !l1) throw new Error("the fixture's first location is L1");
  l1.gateways?.[0]?.devices?.push({ alias: "door", type: "BIKE_HOUSE_DOOR", bus: { board: 1, channel: 6 } });
  op.whitelists = [{ id: WL, name: "Members", targets: [{ location: "L1" }], entities: [{ id: MEMBER }] }];
}

describe("the daemon's state disk full", () => {
  const mount = mkdtempSync(path.join(os.tmpdir(), "gw-tmpfs-"));
  const filler = path.join(mount, "filler");
  let s: DaemonSite;
  beforeAll(async () => {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", mount]);
    mkdirSync(path.join(mount, "state"));
    s = await startDaemonSite({
      store: "postgres",
      stateDir: path.join(mount, "state"),
      doors: [6],
      readers: { "reader-door": "door" },
      manifest,
    });
  });
  afterAll(async () => {
    await s?.stop();
    execFileSync("umount", ["-l", mount]);
    rmSync(mount, { recursive: true, force: true });
  });

  const board = () => s.site.sim.board("bus0", 1);
  const unlocks = (ch: number) => board().received.filter((r) => r.kind === "unlock" && r.channel === ch);
  const applied = async (source: string) =>
    (await hardwareReportRepository(s.site.db).eventsOf("gw-a1")).filter((e) => e.source === source);
  const doorDecisions = () => accessEventRepository(s.site.db).atDevice(DOOR);

  /** Empties the WAL (as a checkpoint leaves it), then fills the disk: the next commit finds no room. */
  function fill() {
    const db = new Database(path.join(s.daemon.stateDir, "gateway.db"));
    try {
      db.pragma("busy_timeout = 5000");
      expect(db.pragma("wal_checkpoint(TRUNCATE)", { simple: true })).toBe(0);
    } finally {
      db.close();
    }
    try {
      execFileSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=64k"], { stdio: "ignore" });
    } catch {
      // dd ends with ENOSPC: the disk is full.
    }
  }

  /** Ready with the member's key, and 10 events acknowledged into the outbox that wait there (broker down). */
  async function tenAcknowledged() {
    await s.ready();
    await expect
      .poll(async () => (await keySyncRepository(s.site.db).versionsOf("gw-a1")).confirmed, {
        timeout: 20_000,
      })
      .toBeGreaterThan(0);
    await s.mosquitto.kill();
    for (let i = 0; i < 10; i++) board().event(3, i % 2 === 0 ? "door_opened" : "door_closed");
    await expect.poll(() => s.daemon.outbox().filter((r) => r.source === "bus0/1/3").length).toBe(10);
    return s.daemon.outbox().filter((r) => r.source === "bus0/1/3");
  }

  it("refuses what it cannot journal, raises the storage alarm, resumes once space returns", async () => {
    const kept = await tenAcknowledged();
    fill();
    await s.mosquitto.restart();
    const fullAt = Date.now();

    // Full: the storage alarm is raised from the heartbeat, which needs no journal.
    await expect
      .poll(async () => (await alarmRepository(s.site.db).findOpen("storage_full", SUBJECT))?.severity, {
        timeout: 20_000,
      })
      .toBe("CRITICAL");
    const lock = await s.site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
    expect(lock.statusCode).toBe(200);
    const unlocksBefore = unlocks(6).length;
    s.site.sim.reader("reader-door").tap(MEMBER);
    for (let i = 0; i < 5; i++) board().event(4, i % 2 === 0 ? "door_opened" : "door_closed");
    // Both refused, and the daemon says why; nothing moved without a record.
    const refusals = () => s.daemon.logged("refused: the gateway's state store is full (SQLITE_FULL)");
    await expect.poll(() => refusals().filter((l) => l.reader === "reader-door").length).toBe(1);
    await expect.poll(() => refusals().filter((l) => l.command_id === lock.json().id).length).toBe(1);
    const lost = () =>
      s.daemon.logged(STORE_FULL_EVENT).filter((l) => l.channel === 4 && l.report === "hardware_event")
        .length;
    await expect.poll(lost).toBe(5); // events it could not keep: never acknowledged, and logged
    expect(board().received.filter((r) => r.kind === "lock")).toHaveLength(0);
    expect(board().channel(1).latch).toBe("unlocked");
    expect(unlocks(6).length).toBe(unlocksBefore);
    expect(s.daemon.child.exitCode).toBeNull();

    // Space returns: the owed refusals go up with their reasons, the alarm clears, the outbox drains.
    rmSync(filler);
    const freedAt = Date.now();
    const command = async () => (await s.site.api("GET", `/device/v1/commands/${lock.json().id}`)).json();
    await expect.poll(async () => (await command()).state.value, { timeout: 30_000 }).toBe("ERROR");
    expect(JSON.stringify(await command())).toContain(STORE_FULL_REASON);
    await expect
      .poll(async () => (await doorDecisions()).map((d) => [d.card_id, d.granted, d.reason]), {
        timeout: 20_000,
      })
      .toEqual([[MEMBER, 0, STORE_FULL_TAP]]);
    await expect
      .poll(() => alarmRepository(s.site.db).findOpen("storage_full", SUBJECT), { timeout: 20_000 })
      .toBeUndefined();
    await expect.poll(async () => (await applied("bus0/1/3")).length, { timeout: 30_000 }).toBe(10);
    expect((await applied("bus0/1/3")).map((e) => e.seq).sort((a, b) => a - b)).toEqual(
      kept.map((r) => r.seq),
    );
    await expect.poll(() => s.daemon.outbox().length, { timeout: 30_000 }).toBe(0);
    expect(s.daemon.quickCheck()).toBe("ok");
    const resumedAt = Date.now();

    // Resumed: a tap opens the door again.
    s.site.sim.reader("reader-door").tap(MEMBER);
    await expect.poll(() => unlocks(6).length, { timeout: 20_000 }).toBe(unlocksBefore + 1);
    const whileFull = (await applied("bus0/1/4")).length;
    console.info(
      `disk-full: acked 10, delivered ${(await applied("bus0/1/3")).length}, duplicated 0; ` +
        `events while full 5, delivered ${whileFull}; command ERROR (store full); tap refused (store_full); ` +
        `full for ${freedAt - fullAt} ms, recovered ${resumedAt - freedAt} ms after space returned`,
    );
  });
});
