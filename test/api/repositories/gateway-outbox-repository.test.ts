import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayOutboxRepository } from "../../../cloud/gateway-link/gateway-outbox-repository.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

const T0 = "2026-01-15T10:00:00.000Z";
const T1 = "2026-01-15T11:00:00.000Z";
const T2 = "2026-01-15T12:00:00.000Z";

describe("gateway outbox repository", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());
  const repo = () => gatewayOutboxRepository(store.db);

  it("marks a message applied once: the same (gateway, outbox, seq) again is a duplicate", async () => {
    expect(await repo().markApplied("gw-a1", "ob-1", 1, T0)).toBe(true);
    expect(await repo().markApplied("gw-a1", "ob-1", 1, T1)).toBe(false);
    // Another outbox, another gateway or no outbox at all: each its own identity.
    expect(await repo().markApplied("gw-a1", "ob-2", 1, T0)).toBe(true);
    expect(await repo().markApplied("gw-a1", "", 1, T0)).toBe(true);
    expect(await repo().markApplied("gw-a2", "ob-1", 1, T0)).toBe(true);
  });

  it("lists a gateway's applied seqs by outbox, then seq", async () => {
    await repo().markApplied("gw-a1", "ob-1", 3, T0);
    await repo().markApplied("gw-a1", "ob-1", 2, T0);
    expect(await repo().appliedOf("gw-a1")).toEqual([
      { outbox_id: "", seq: 1 },
      { outbox_id: "ob-1", seq: 1 },
      { outbox_id: "ob-1", seq: 2 },
      { outbox_id: "ob-1", seq: 3 },
      { outbox_id: "ob-2", seq: 1 },
    ]);
    expect(await repo().appliedOf("gw-b1")).toEqual([]);
  });

  it("forgets only the outbox's applied seqs below a seq, and says how many", async () => {
    expect(await repo().forgetAppliedBelow("gw-a1", "ob-1", 3)).toBe(2);
    expect(await repo().forgetAppliedBelow("gw-a1", "ob-1", 3)).toBe(0);
    expect(await repo().appliedOf("gw-a1")).toEqual([
      { outbox_id: "", seq: 1 },
      { outbox_id: "ob-1", seq: 3 },
      { outbox_id: "ob-2", seq: 1 },
    ]);
    expect(await repo().appliedOf("gw-a2")).toEqual([{ outbox_id: "ob-1", seq: 1 }]);
  });

  it("keeps an outbox's position only when it grows; a new outbox starts its checkpoint there", async () => {
    await repo().recordPosition("gw-a1", { id: "ob-1", unconfirmed_from: 5 }, T0);
    await repo().recordPosition("gw-a1", { id: "ob-1", unconfirmed_from: 4 }, T1);
    await repo().recordPosition("gw-a1", { id: "ob-1", unconfirmed_from: 5 }, T1);
    await repo().recordPosition("gw-a2", { id: "ob-9", unconfirmed_from: 2 }, T0);
    await repo().recordPosition("gw-a1", { id: "ob-1", unconfirmed_from: 8 }, T2);
    expect(await repo().positions()).toEqual([
      {
        gateway_id: "gw-a1",
        outbox_id: "ob-1",
        unconfirmed_from: 8,
        reported_at: T2,
        checkpoint_from: 5,
        checkpoint_at: T0,
      },
      {
        gateway_id: "gw-a2",
        outbox_id: "ob-9",
        unconfirmed_from: 2,
        reported_at: T0,
        checkpoint_from: 2,
        checkpoint_at: T0,
      },
    ]);
  });

  it("finds the checkpoints reported at or before a cutoff, and moves one up to its latest report", async () => {
    expect(await repo().checkpointsDue("2026-01-15T09:59:59.999Z")).toEqual([]);
    const due = await repo().checkpointsDue(T0);
    expect(due.sort((a, b) => a.gateway_id.localeCompare(b.gateway_id))).toEqual([
      { gateway_id: "gw-a1", outbox_id: "ob-1", checkpoint_from: 5 },
      { gateway_id: "gw-a2", outbox_id: "ob-9", checkpoint_from: 2 },
    ]);
    await repo().advanceCheckpoint("gw-a1", "ob-1");
    expect(await repo().checkpointsDue(T1)).toEqual([
      { gateway_id: "gw-a2", outbox_id: "ob-9", checkpoint_from: 2 },
    ]);
    expect(await repo().checkpointsDue(T2)).toContainEqual({
      gateway_id: "gw-a1",
      outbox_id: "ob-1",
      checkpoint_from: 8,
    });
  });
});
