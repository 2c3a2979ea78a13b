import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { changeStampOf } from "./change-stamp.ts";
import { type Db, openDb } from "./db.ts";

describe("the SQLite change stamp", () => {
  const open: Db[] = [];
  let dir = "";
  afterEach(async () => {
    for (const db of open.splice(0)) await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  async function store(file: string): Promise<Db> {
    const db = await openDb({ kind: "sqlite", file });
    open.push(db);
    return db;
  }

  it("moves with a write by this connection or a commit by another, and stands through reads", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "parking-stamp-"));
    const file = path.join(dir, "cloud.db");
    const db = await store(file);
    const other = await store(file);
    const stamp = changeStampOf(db);
    if (!stamp) throw new Error("a SQLite store has a change stamp");
    const write = (on: Db, name: string) =>
      on
        .insertInto("operators")
        .values({ id: name, name, created_at: new Date(0).toISOString() })
        .execute();

    const first = stamp();
    await db.selectFrom("operators").selectAll().execute();
    expect(stamp()).toBe(first);

    await write(db, "a");
    const afterOwn = stamp();
    expect(afterOwn).not.toBe(first);

    await write(other, "b");
    const afterOther = stamp();
    expect(afterOther).not.toBe(afterOwn);

    // A write rolled back still moves it: a stamp may move without a change, never stand through one.
    await db
      .transaction()
      .execute(async (tx) => {
        await write(tx as unknown as Db, "c");
        throw new Error("roll back");
      })
      .catch(() => {});
    expect(stamp()).not.toBe(afterOther);
    const settled = stamp();
    await sql`select 1`.execute(other);
    expect(stamp()).toBe(settled);
  });

  it("is null on a store without one", () => {
    expect(changeStampOf({})).toBeNull();
  });
});
