import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { MemoryOutbox } from "../../bench/fleet/memory-outbox.ts";
import { type GatewayDb, openGatewayDb } from "../../gateway/adapters/sqlite/open-db.ts";
import { SqliteOutbox } from "../../gateway/adapters/sqlite/outbox.ts";
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
