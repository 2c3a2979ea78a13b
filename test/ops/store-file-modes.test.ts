import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadCloudConfig } from "../../cloud/config.ts";
import { startCloud } from "../../cloud/server.ts";
import { openDb } from "../../cloud/store/db.ts";
import { openGatewayDb } from "../../gateway/adapters/sqlite/open-db.ts";
import { FakeClock } from "../support/fake-clock.ts";

const modeOf = (p: string) => statSync(p).mode & 0o777;

/** The database and the -wal and -shm files SQLite creates beside it (they take its mode). */
function expectOwnerOnly(file: string) {
  expect(modeOf(path.dirname(file)).toString(8)).toBe("700");
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    expect(existsSync(f), f).toBe(true);
    expect(modeOf(f).toString(8), f).toBe("600");
  }
}

describe("SQLite files are readable by their owner only", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), "store-modes-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("creates the cloud's database 0600 in a directory it creates 0700", async () => {
    const file = path.join(root, "nested", "data", "cloud.db");
    const db = await openDb({ kind: "sqlite", file });
    try {
      expectOwnerOnly(file);
    } finally {
      await db.destroy();
    }
  });

  it("creates the cloud's DATA_DIR 0700 with cloud.db 0600 when the cloud starts", async () => {
    const dataDir = path.join(root, "var", "parking");
    const cloud = await startCloud(
      loadCloudConfig({
        DATA_DIR: dataDir,
        PORT: "0",
        MQTT_PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "silent",
      }),
      { clock: new FakeClock(), log: pino({ level: "silent" }) },
    );
    try {
      expect(modeOf(dataDir).toString(8)).toBe("700");
      expectOwnerOnly(path.join(dataDir, "cloud.db"));
    } finally {
      await cloud.stop();
    }
  });

  it("creates the gateway's state directory 0700 and gateway.db 0600", () => {
    const stateDir = path.join(root, "state", "gw");
    const db = openGatewayDb(stateDir);
    try {
      expectOwnerOnly(path.join(stateDir, "gateway.db"));
    } finally {
      db.close();
    }
  });

  it("opens an existing database again without touching its contents", () => {
    const stateDir = path.join(root, "state");
    const first = openGatewayDb(stateDir);
    first
      .prepare(
        "INSERT INTO local_actions (at, who, why, device_alias, action, result) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run("2026-01-15T10:00:00.000Z", "tech", "test", "1", "unlock", "ok");
    first.close();
    const again = openGatewayDb(stateDir);
    try {
      expect(again.prepare("SELECT count(*) AS n FROM local_actions").get()).toEqual({ n: 1 });
      expectOwnerOnly(path.join(stateDir, "gateway.db"));
    } finally {
      again.close();
    }
  });
});
