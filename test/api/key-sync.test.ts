import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyStatus } from "../../cloud/gateway-link/gateway-reports.ts";
import {
  createKeySync,
  type KeySync,
  REPORT_EVERY_MS,
  SNAPSHOT_EVERY_MS,
} from "../../cloud/key-sync/key-sync.ts";
import { keySyncRepository } from "../../cloud/key-sync/key-sync-repository.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { type CloudMetrics, counterValue, createCloudMetrics } from "../../cloud/metrics.ts";
import type { KeysDown } from "../../shared/wire/messages.ts";
import { type CloudHarness, fixtureSecretHash, startCloudHarness } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { CLIENTS, fixtureManifest, fx, OP_A } from "../support/fixture-site.ts";

const WL = "c0c0c0c0-0000-4000-8000-000000000001";
const GW = "gw-a1";
const log = pino({ level: "silent" });

/** A whitelist of operator A targeting L1 (gw-a1's location) with keys_only, declared by the manifest. */
async function declare(
  h: CloudHarness,
  opts: { keysOnly?: boolean; cards?: string[]; device?: string } = {},
) {
  const base = fixtureManifest(await fixtureSecretHash());
  const manifest = SiteManifest.parse({
    ...base,
    operators: base.operators.map((op) =>
      op.id !== OP_A
        ? op
        : {
            ...op,
            whitelists: [
              {
                id: WL,
                name: "Sync cards",
                keys_only: opts.keysOnly ?? true,
                targets: [opts.device ? { location: "L1", device: opts.device } : { location: "L1" }],
                entities: (opts.cards ?? ["04a1b2c3d4", "0a0b"]).map((id) => ({ id })),
              },
            ],
          },
    ),
  });
  await applyManifest(h.db, manifest, h.clock);
}

const versionsOf = (h: CloudHarness) => keySyncRepository(h.db).versionsOf(GW);
const versionOf = async (h: CloudHarness) => (await versionsOf(h)).version;

const addCards = (h: CloudHarness, entities: object[], operation = "ADD") =>
  h.call(CLIENTS.admin, {
    method: "POST",
    url: `/whitelist/v1/whitelists/${WL}/entities`,
    payload: { operation, entities },
  });

describe("whitelist sync, cloud side", () => {
  let h: CloudHarness;
  let sent: KeysDown[];
  let sync: KeySync;
  beforeEach(async () => {
    h = await startCloudHarness();
    sent = [];
    // Every report answered in turn: what each answer is (the pacing has its own tests below).
    sync = createKeySync({
      db: h.db,
      clock: h.clock,
      log,
      reportEveryMs: 0,
      snapshotEveryMs: 0,
      publish: (_gw, msg) => {
        sent.push(msg);
        return Promise.resolve();
      },
    });
  });
  afterEach(async () => {
    await sync.stop();
    await h.close();
  });

  it("keeps a versioned view per gateway of the keys_only cards targeting its location", async () => {
    await declare(h);
    expect(await versionOf(h)).toBe(1);
    const grants = await keySyncRepository(h.db).grantsOf(GW);
    expect(grants.map((g) => g.card_id).sort()).toEqual(["04a1b2c3d4", "0a0b"]);
    expect(grants[0]).toMatchObject({
      whitelist_id: WL,
      status: "ACTIVE",
      location_ids: [fx.location("L1")],
      device_ids: [],
    });
    // gw-b1 (operator B) and gw-a1's neighbours at other locations hold nothing.
    expect(await keySyncRepository(h.db).holdersOf(WL)).toEqual([GW]);
    // Applying the same manifest again changes nothing: no new version.
    await declare(h);
    expect(await versionOf(h)).toBe(1);
  });

  it("keeps cards of a whitelist without keys_only off the gateway", async () => {
    await declare(h, { keysOnly: false });
    expect(await versionOf(h)).toBe(0);
  });

  it("an API change bumps the version once, tells the link, and goes down as a delta from the gateway's version", async () => {
    await declare(h);
    await sync.onReport(GW, { kind: "version", gateway_id: GW, version: 1 });
    expect(sent).toEqual([]);
    const res = await addCards(h, [{ id: "0c0d", id_type: "rfid", status: "ACTIVE" }]);
    expect(res.statusCode).toBe(204);
    expect(h.gateways.keyChanges).toContainEqual([GW]);
    expect(await versionOf(h)).toBe(2);
    sync.keysChanged([GW]);
    await sync.stop();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ kind: "delta", base_version: 1, version: 2, removals: [] });
    expect(sent[0]?.kind === "delta" && sent[0].upserts.map((g) => g.card_id)).toEqual(["0c0d"]);

    // REMOVE: a removal, in the next version.
    await addCards(h, [{ id: "0a0b", id_type: "rfid" }], "REMOVE");
    sync.keysChanged([GW]);
    await sync.stop();
    expect(sent[1]).toMatchObject({
      kind: "delta",
      base_version: 2,
      version: 3,
      upserts: [],
      removals: [{ card_id: "0a0b", whitelist_id: WL }],
    });
  });

  it("a gateway that reports another version gets a catch-up delta, or a snapshot when it holds nothing known", async () => {
    await declare(h);
    await addCards(h, [{ id: "0c0d", id_type: "rfid" }]);
    await addCards(h, [{ id: "0c0e", id_type: "rfid" }]);
    expect(await versionOf(h)).toBe(3);
    // Held version 1: versions 2 and 3 merged into one delta.
    await sync.onReport(GW, { kind: "version", gateway_id: GW, version: 1 });
    expect(sent.at(-1)).toMatchObject({ kind: "delta", base_version: 1, version: 3 });
    expect(sent.at(-1)?.kind === "delta" && sent.at(-1)).toMatchObject({ upserts: [{}, {}] });
    // A fresh gateway (version 0 with no change set stored for it): a snapshot of everything.
    await keySyncRepository(h.db).dropChangesUpTo(GW, 1);
    await sync.onReport(GW, { kind: "version", gateway_id: GW, version: 0 });
    const snap = sent.at(-1);
    expect(snap).toMatchObject({ kind: "snapshot", version: 3, part: 1, parts: 1 });
    expect(snap?.kind === "snapshot" && snap.grants.map((g) => g.card_id).sort()).toEqual([
      "04a1b2c3d4",
      "0a0b",
      "0c0d",
      "0c0e",
    ]);
    // A gateway ahead of the cloud (its store was restored from an old backup): a snapshot too.
    await sync.onReport(GW, { kind: "version", gateway_id: GW, version: 9 });
    expect(sent.at(-1)).toMatchObject({ kind: "snapshot", version: 3 });
    // The confirmed version is recorded.
    expect((await versionsOf(h)).confirmed).toBe(9);
  });

  it("sends a large view as a snapshot in parts of one version", async () => {
    const cards = Array.from({ length: 2_500 }, (_, i) => i.toString(16).padStart(8, "0"));
    await declare(h, { cards });
    await sync.onReport(GW, { kind: "version", gateway_id: GW, version: 0 });
    expect(sent.map((m) => m.kind === "snapshot" && [m.part, m.parts, m.grants.length])).toEqual([
      [1, 3, 1000],
      [2, 3, 1000],
      [3, 3, 500],
    ]);
  });

  it("a device target reaches only the gateway that drives the device, with the device's id", async () => {
    await declare(h, { device: "2" });
    expect(await keySyncRepository(h.db).holdersOf(WL)).toEqual([GW]);
    const grants = await keySyncRepository(h.db).grantsOf(GW);
    expect(grants[0]).toMatchObject({
      location_ids: [],
      device_ids: [fx.device("L1", "2")],
    });
  });

  it("answers a question about a card with its grants at the gateway's location, keys_only or not", async () => {
    await declare(h, { keysOnly: false });
    const q = "9d7d7c4e-0000-4000-8000-000000000001";
    await sync.onReport(GW, { kind: "query", gateway_id: GW, query_id: q, card_id: "0a0b", device_id: null });
    expect(sent.at(-1)).toMatchObject({
      kind: "answer",
      query_id: q,
      card_id: "0a0b",
      grants: [{ card_id: "0a0b" }],
    });
    await sync.onReport(GW, { kind: "query", gateway_id: GW, query_id: q, card_id: "ffff", device_id: null });
    expect(sent.at(-1)).toMatchObject({ kind: "answer", card_id: "ffff", grants: [] });
    // Another operator's gateway learns nothing of operator A's cards.
    await sync.onReport("gw-b1", {
      kind: "query",
      gateway_id: "gw-b1",
      query_id: q,
      card_id: "0a0b",
      device_id: null,
    });
    expect(sent.at(-1)).toMatchObject({ kind: "answer", grants: [] });
  });

  it("the sweep brings an online gateway whose confirmed version lags up to date (a lost delta)", async () => {
    await declare(h);
    await sync.onReport(GW, { kind: "version", gateway_id: GW, version: 1 });
    await addCards(h, [{ id: "0c0d", id_type: "rfid" }]);
    // The delta was "lost": nobody told the sync; the gateway is online.
    await applyStatus(h.db, { gateway_id: GW, online: true, at: h.clock.now().toISOString() }, h.clock.now());
    sync.start();
    h.clock.advance(30_000);
    await eventually(() => expect(sent.at(-1)).toMatchObject({ kind: "delta", base_version: 1, version: 2 }));
  });
});

describe("whitelist sync, pacing one gateway's reports", () => {
  let h: CloudHarness;
  let sent: KeysDown[];
  let sync: KeySync;
  let metrics: CloudMetrics;
  /** Snapshots sent (their first parts) and grants sent in all. */
  const snapshots = () =>
    sent.filter((m): m is Extract<KeysDown, { kind: "snapshot" }> => m.kind === "snapshot" && m.part === 1);
  const grantsSent = () =>
    sent.reduce(
      (n, m) => n + (m.kind === "snapshot" ? m.grants.length : m.kind === "delta" ? m.upserts.length : 0),
      0,
    );
  const version = (v: number) => ({ kind: "version" as const, gateway_id: GW, version: v });
  const CARDS = Array.from({ length: 2_500 }, (_, i) => i.toString(16).padStart(8, "0"));

  beforeEach(async () => {
    h = await startCloudHarness();
    sent = [];
    metrics = createCloudMetrics();
    sync = createKeySync({
      db: h.db,
      clock: h.clock,
      log,
      metrics,
      publish: (_gw, msg) => {
        sent.push(msg);
        return Promise.resolve();
      },
    });
  });
  afterEach(async () => {
    await sync.stop();
    await h.close();
  });

  it("answers 600 version reports, each of which alone would cost a snapshot, with two snapshots", async () => {
    // 2,500 grants: neither version 0 (one change set of more than a delta carries) nor a version ahead
    // of the cloud's can be answered with a delta; unpaced, each report costs 2,500 grants.
    await declare(h, { cards: CARDS });
    const current = await versionOf(h);
    // A burst: all arrive before the first answer starts, so that answer takes the latest.
    await Promise.all(Array.from({ length: 300 }, (_, i) => sync.onReport(GW, version(i % 2 ? 9_999 : 0))));
    expect(snapshots().map((m) => m.version)).toEqual([current]);
    expect(await counterValue(metrics.keyReportsCoalesced)).toBe(299);
    // A second burst within the report interval: nothing is answered until it ends.
    const second = Array.from({ length: 300 }, (_, i) => sync.onReport(GW, version(i % 2 ? 0 : 9_999)));
    await Promise.resolve();
    expect(snapshots()).toHaveLength(1);
    h.clock.advance(REPORT_EVERY_MS);
    await Promise.all(second);
    // Answered as the latest (version 0: a snapshot), which is put off to the end of the snapshot interval.
    expect((await versionsOf(h)).confirmed).toBe(0);
    expect(snapshots()).toHaveLength(1);
    expect(await counterValue(metrics.keySnapshotsDeferred)).toBe(1);
    h.clock.advance(SNAPSHOT_EVERY_MS - REPORT_EVERY_MS);
    await eventually(() => expect(snapshots()).toHaveLength(2));
    expect(snapshots()[1]?.version).toBe(current);
    // And nothing more comes of them.
    h.clock.advance(10 * SNAPSHOT_EVERY_MS);
    await sync.stop();
    expect(snapshots()).toHaveLength(2);
    expect(grantsSent()).toBe(2 * CARDS.length); // unpaced: 600 × 2,500 = 1.5 million
  });

  it("brings a gateway that really lags up to date, through a storm of its own reports and changes meanwhile", async () => {
    await declare(h, { cards: CARDS });
    // The gateway as the daemon behaves: it applies what comes and reports the version it then holds.
    let held = 0;
    let staged: { version: number; parts: Set<number> } | null = null;
    const reports: Promise<void>[] = [];
    const report = () => reports.push(sync.onReport(GW, version(held)));
    sync = createKeySync({
      db: h.db,
      clock: h.clock,
      log,
      metrics,
      publish: (_gw, msg) => {
        sent.push(msg);
        if (msg.kind === "delta" && msg.base_version === held) held = msg.version;
        if (msg.kind === "snapshot") {
          if (staged?.version !== msg.version) staged = { version: msg.version, parts: new Set() };
          staged.parts.add(msg.part);
          if (staged.parts.size < msg.parts) return Promise.resolve();
          held = msg.version;
        }
        report();
        return Promise.resolve();
      },
    });
    // A reconnect storm: it says 300 times that it holds nothing.
    for (let i = 0; i < 300; i++) report();
    // Whitelist changes land while it catches up.
    for (const id of ["0c0d0e0f", "0c0d0e10"]) {
      expect((await addCards(h, [{ id, id_type: "rfid" }])).statusCode).toBe(204);
      sync.keysChanged([GW]);
    }
    for (let t = 0; t < 3 * SNAPSHOT_EVERY_MS; t += REPORT_EVERY_MS) {
      h.clock.advance(REPORT_EVERY_MS);
      await Promise.all(reports);
    }
    const current = await versionOf(h);
    await eventually(async () => {
      expect(held).toBe(current);
      expect((await versionsOf(h)).confirmed).toBe(current);
    });
    expect(snapshots().length).toBeLessThanOrEqual(2);
  });
});
