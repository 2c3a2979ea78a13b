import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuditEntry, auditRepository } from "../../../cloud/audit/audit-repository.ts";
import { OP_A, OP_B } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

const at = (m: number) => new Date(Date.UTC(2026, 0, 15, 10, m)).toISOString();
const id = (n: number) => `a0d17000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const CLIENT = { kind: "api_client", id: "a-admin" };
const RIDER = { kind: "rider", id: "rider-1" };

/** An entry of operator A by its admin client, a force-unlock of device d-1, unless told otherwise. */
function entry(n: number, over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: id(n),
    operator_id: OP_A,
    at: at(n),
    actor: CLIENT,
    action: "command.force-unlock",
    subject: { type: "device", id: "d-1" },
    reason: "MAINTENANCE",
    comment: null,
    changes: { state: { from: "LOCKED", to: "UNLOCKING" } },
    correlation_id: `req-${n}`,
    ...over,
  };
}

const entries = [
  entry(3),
  entry(1, { actor: RIDER, action: "session.end", subject: { type: "session", id: "s-1" }, reason: null }),
  entry(5, { action: "location.patch", subject: { type: "location", id: "l-1" }, reason: null, changes: {} }),
  entry(2, { at: at(3), comment: "stuck at the gate", correlation_id: null }),
  entry(4, { operator_id: OP_B, actor: { kind: "api_client", id: "b-admin" } }),
  entry(6, { changes: { label: { from: "Old", to: "New" }, public_tags: { from: ["a"], to: ["a", "b"] } } }),
];

describe("audit repository", () => {
  let store: TestDb;
  const repo = () => auditRepository(store.db);
  const ids = (list: AuditEntry[]) => list.map((e) => e.id);
  const all = (f = {}, limit = 100) => repo().list(OP_A, f, { limit });

  beforeAll(async () => {
    store = await openFixtureStore();
    for (const e of entries) await repo().insert(e);
  });
  afterAll(() => store.drop());

  it("reads back every field as written: actor, subject, nulls and field-level changes", async () => {
    const listed = await all();
    for (const e of entries.filter((x) => x.operator_id === OP_A))
      expect(listed.find((x) => x.id === e.id)).toEqual(e);
  });

  it("lists one operator's entries only, newest first, ties on the time by id (descending)", async () => {
    expect(ids(await all())).toEqual([id(6), id(5), id(3), id(2), id(1)]);
    expect(ids(await repo().list(OP_B, {}, { limit: 100 }))).toEqual([id(4)]);
    expect(await repo().list("cccccccc-0000-4000-8000-000000000003", {}, { limit: 100 })).toEqual([]);
  });

  it("filters by actor (kind, id or both), subject (type, or type and id) and action", async () => {
    expect(ids(await all({ actor: RIDER }))).toEqual([id(1)]);
    expect(ids(await all({ actor: { kind: "api_client" } }))).toEqual([id(6), id(5), id(3), id(2)]);
    expect(ids(await all({ actor: { id: "b-admin" } }))).toEqual([]);
    expect(ids(await all({ subject: { type: "location" } }))).toEqual([id(5)]);
    expect(ids(await all({ subject: { type: "device", id: "d-1" } }))).toEqual([id(6), id(3), id(2)]);
    expect(ids(await all({ subject: { type: "device", id: "d-2" } }))).toEqual([]);
    expect(ids(await all({ action: "session.end" }))).toEqual([id(1)]);
  });

  it("filters by time: from inclusive, before exclusive", async () => {
    expect(ids(await all({ from: at(3) }))).toEqual([id(6), id(5), id(3), id(2)]);
    expect(ids(await all({ before: at(3) }))).toEqual([id(1)]);
    expect(ids(await all({ from: at(3), before: at(5) }))).toEqual([id(3), id(2)]);
  });

  it("pages: at most limit, then on from after the cursor's time and id", async () => {
    const first = await all({}, 2);
    expect(ids(first)).toEqual([id(6), id(5)]);
    const after = { at: at(3), id: id(3) };
    expect(ids(await repo().list(OP_A, {}, { limit: 2, after }))).toEqual([id(2), id(1)]);
    const last = { at: at(1), id: id(1) };
    expect(await repo().list(OP_A, {}, { limit: 2, after: last })).toEqual([]);
  });

  it("writes within a transaction, and nothing of one rolled back", async () => {
    await store.db
      .transaction()
      .execute(async (trx) => {
        await auditRepository(trx).insert(entry(7, { operator_id: OP_B }));
        throw new Error("rolled back");
      })
      .catch(() => undefined);
    expect(ids(await repo().list(OP_B, {}, { limit: 100 }))).toEqual([id(4)]);
  });
});
