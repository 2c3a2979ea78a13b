import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commandRepository } from "../../../cloud/commands/command-repository.ts";
import { applyManifest } from "../../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../../cloud/manifest/manifest-schema.ts";
import { type PhotoRecord, photoRepository } from "../../../cloud/photos/photo-repository.ts";
import { fixtureSecretHash } from "../../support/cloud-harness.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { fixtureManifest, fx, OP_A, OP_B } from "../../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const T0 = new Date("2026-01-15T10:00:00.000Z");
const iso = (minutes: number) => new Date(T0.getTime() + minutes * 60_000).toISOString();
const CAMERA = fx.device("L1", "1");
const OTHER = fx.device("L1", "2");
const B_DEVICE = fx.device("B1", "1");
const cmd = (n: number) => `c0c0c0c0-0000-4000-8000-${String(n).padStart(12, "0")}`;

function photo(n: number, o: Partial<PhotoRecord> = {}): PhotoRecord {
  return {
    command_id: cmd(n),
    device_id: CAMERA,
    operator_id: OP_A,
    mime: "image/jpeg",
    bytes: Buffer.from(`photo ${n}`).toString("base64"),
    size: `photo ${n}`.length,
    taken_at: iso(n),
    received_at: iso(n),
    pruned_at: null,
    ...o,
  };
}

describe("photo repository", () => {
  let store: TestDb;
  let repo: ReturnType<typeof photoRepository>;

  beforeEach(async () => {
    store = await openTestDb();
    await applyManifest(
      store.db,
      SiteManifest.parse(fixtureManifest(await fixtureSecretHash())),
      new FakeClock(T0),
    );
    const commands = commandRepository(store.db);
    for (let n = 1; n <= 9; n++)
      await commands.insert({
        id: cmd(n),
        operator_id: n === 9 ? OP_B : OP_A,
        device_id: n === 9 ? B_DEVICE : n === 8 ? OTHER : CAMERA,
        name: "take-photo",
        state: { value: "SUCCESS", reason: "done", timeout_at: null },
        params: { command: "take-photo" },
        requested_by: "a-admin",
        events: [],
        wire_request: null,
        created_at: iso(n),
        updated_at: iso(n),
      });
    repo = photoRepository(store.db);
  });
  afterEach(() => store.drop());

  it("keeps parts, tells them apart per command, gives their data in part order and drops them", async () => {
    const part = (n: number, p: number) => ({
      command_id: cmd(n),
      part: p,
      parts: 2,
      mime: "image/jpeg" as const,
      data: Buffer.from(`${n}.${p}`).toString("base64"),
      received_at: iso(p),
    });
    await repo.addPart(part(1, 2));
    await repo.addPart(part(1, 1));
    await repo.addPart(part(2, 1));
    expect((await repo.partsOf(cmd(1))).sort((a, b) => a.part - b.part)).toEqual([
      { part: 1, parts: 2, mime: "image/jpeg" },
      { part: 2, parts: 2, mime: "image/jpeg" },
    ]);
    expect(await repo.partData(cmd(1))).toEqual([part(1, 1).data, part(1, 2).data]);
    expect(await repo.partsOf(cmd(3))).toEqual([]);
    expect(await repo.partData(cmd(3))).toEqual([]);
    await repo.dropParts(cmd(1));
    expect(await repo.partsOf(cmd(1))).toEqual([]);
    expect(await repo.partsOf(cmd(2))).toHaveLength(1);
  });

  it("drops the parts received by a cutoff and says how many", async () => {
    for (const [n, minutes] of [
      [1, 1],
      [2, 5],
    ] as const)
      await repo.addPart({
        command_id: cmd(n),
        part: 1,
        parts: 2,
        mime: "image/jpeg",
        data: "",
        received_at: iso(minutes),
      });
    expect(await repo.dropPartsReceivedBy(iso(1))).toBe(1);
    expect(await repo.dropPartsReceivedBy(iso(1))).toBe(0);
    expect(await repo.partsOf(cmd(2))).toHaveLength(1);
  });

  it("stores a photo and serves it to its operator only", async () => {
    expect(await repo.isAssembled(cmd(1))).toBe(false);
    await repo.insert(photo(1));
    await repo.insert(photo(9, { operator_id: OP_B, device_id: B_DEVICE }));
    expect(await repo.isAssembled(cmd(1))).toBe(true);
    expect(await repo.find(cmd(1))).toEqual(photo(1));
    expect(await repo.find(cmd(2))).toBeUndefined();
    expect(await repo.findForOperator(OP_A, cmd(1))).toEqual({
      mime: "image/jpeg",
      bytes: photo(1).bytes,
      pruned_at: null,
    });
    expect(await repo.findForOperator(OP_A, cmd(9))).toBeUndefined();
    expect(await repo.findForOperator(OP_B, cmd(1))).toBeUndefined();
    expect(await repo.findForOperator(OP_A, cmd(2))).toBeUndefined();
  });

  it("lists kept photos newest first per device, by arrival cutoff, and devices over a count", async () => {
    for (const n of [1, 2, 3]) await repo.insert(photo(n));
    await repo.insert(photo(8, { device_id: OTHER }));
    await repo.insert(photo(9, { operator_id: OP_B, device_id: B_DEVICE }));
    expect(await repo.keptOf(CAMERA)).toEqual([cmd(3), cmd(2), cmd(1)]);
    expect(await repo.keptOf(OTHER)).toEqual([cmd(8)]);
    expect((await repo.keptReceivedBy(iso(2))).sort()).toEqual([cmd(1), cmd(2)]);
    expect(await repo.devicesKeepingMoreThan(2)).toEqual([CAMERA]);
    expect((await repo.devicesKeepingMoreThan(0)).sort()).toEqual([CAMERA, OTHER, B_DEVICE].sort());
  });

  it("prunes the bytes of kept photos only, keeping the record of when they went", async () => {
    for (const n of [1, 2, 3]) await repo.insert(photo(n));
    expect(await repo.prune([cmd(1), cmd(2), cmd(7)], iso(30))).toBe(2);
    expect(await repo.prune([cmd(1)], iso(40))).toBe(0);
    expect(await repo.prune([], iso(40))).toBe(0);
    expect(await repo.findForOperator(OP_A, cmd(1))).toEqual({
      mime: "image/jpeg",
      bytes: "",
      pruned_at: iso(30),
    });
    expect(await repo.isAssembled(cmd(1))).toBe(true);
    expect(await repo.find(cmd(1))).toEqual(photo(1, { bytes: "", pruned_at: iso(30) }));
    expect(await repo.keptOf(CAMERA)).toEqual([cmd(3)]);
    expect(await repo.keptReceivedBy(iso(10))).toEqual([cmd(3)]);
    expect(await repo.devicesKeepingMoreThan(1)).toEqual([]);
  });

  it("prunes a list longer than one statement may name", async () => {
    await repo.insert(photo(1));
    const many = [...Array.from({ length: 1200 }, (_, i) => `missing-${i}`), cmd(1)];
    expect(await repo.prune(many, iso(30))).toBe(1);
  });
});
