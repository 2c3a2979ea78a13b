import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryOutbox } from "../../bench/fleet/memory-outbox.ts";
import { type GatewayDb, openGatewayDb } from "../../gateway/adapters/sqlite/open-db.ts";
import { SqliteOutbox } from "../../gateway/adapters/sqlite/outbox.ts";
import type { Pending } from "../../gateway/ports.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { CONTRACT_GATEWAY, outboxContract } from "../support/port-contracts/outbox.contract.ts";

// The daemon's durable outbox, in its SQLite store.
outboxContract("SQLite (gateway store)", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "outbox-contract-"));
  let db: GatewayDb | null = null;
  return {
    open: (clock) => {
      db = openGatewayDb(dir);
      return new SqliteOutbox(db, CONTRACT_GATEWAY, clock);
    },
    dispose: () => {
      if (db?.open) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// The fleet bench's simulated gateways keep theirs in memory.
outboxContract("memory (fleet bench)", () => ({
  open: (clock) => new MemoryOutbox(CONTRACT_GATEWAY, clock, "5c3e2a10-7b4d-4f6e-8a9b-0c1d2e3f4a5b"),
  dispose: () => {},
}));

// What only the SQLite outbox meets: appends inside a caller's transaction (a command's log entry and its
// report), which may roll back, and a store opened again with rows in it.
describe("the SQLite outbox's depth, kept without counting the table at every heartbeat", () => {
  const clock = new FakeClock();
  const dir = mkdtempSync(path.join(tmpdir(), "outbox-depth-"));
  let db = openGatewayDb(dir);
  let outbox = new SqliteOutbox(db, CONTRACT_GATEWAY, clock);
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const event = (): Pending => ({
    type: "hardware_event",
    device_id: "11111111-1111-4111-8111-111111111111",
    source: "main/1/1",
    event: "door_opened",
    detail: "",
  });
  const rolledBack = () =>
    expect(() =>
      db.transaction(() => {
        outbox.append(event());
        throw new Error("the caller's work failed");
      })(),
    ).toThrow("the caller's work failed");

  it("counts a row appended in a transaction that committed, and not one that rolled back, even if its seq is given again", async () => {
    expect(outbox.depth()).toBe(0); // counted once here, then kept
    db.transaction(() => outbox.append(event()))();
    expect(outbox.depth()).toBe(1);
    rolledBack();
    expect(outbox.depth()).toBe(1);
    rolledBack();
    const again = outbox.append(event()); // the rolled-back seq, given again outside any transaction
    expect(again.seq).toBe(2);
    db.transaction(() => outbox.append(event()))();
    rolledBack();
    const committed = db.transaction(() => outbox.append(event()))(); // the same seq, committed this time
    await Promise.resolve(); // the appends' microtasks: what they settle is counted once
    expect(committed.seq).toBe(4);
    expect(outbox.depth()).toBe(4);
    expect(outbox.confirm([1, 2])).toBe(2);
    expect(outbox.depth()).toBe(2);
    expect(outbox.depth()).toBe(outbox.stats().pending);
  });

  it("inside a transaction, says what that transaction sees; a confirm there is counted again after", () => {
    db.transaction(() => {
      outbox.append(event());
      expect(outbox.depth()).toBe(3);
    })();
    expect(() =>
      db.transaction(() => {
        outbox.confirm([3]);
        throw new Error("rolled back");
      })(),
    ).toThrow("rolled back");
    expect(outbox.depth()).toBe(3);
    expect(outbox.depth()).toBe(outbox.stats().pending);
  });

  it("a store opened again counts the rows it holds", () => {
    db.close();
    db = openGatewayDb(dir);
    outbox = new SqliteOutbox(db, CONTRACT_GATEWAY, clock);
    expect(outbox.depth()).toBe(3);
  });
});
