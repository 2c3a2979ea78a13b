import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Db, openDb } from "../store/db.ts";
import { createRefreshTokenIntake } from "./refresh-token-intake.ts";
import { redeemRefreshToken } from "./refresh-tokens.ts";

const OPERATOR = "cccccccc-0000-4000-8000-000000000001";
const rider = (i: number) => ({
  id: `dddddddd-0000-4000-8000-${String(i).padStart(12, "0")}`,
  operatorId: OPERATOR,
});
const now = new Date("2026-11-01T10:00:00Z");

describe("the refresh-token intake (sign-ins' group commit)", () => {
  let dir = "";
  let db: Db;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "parking-refresh-intake-"));
    db = await openDb({ kind: "sqlite", file: path.join(dir, "cloud.db") });
    const at = now.toISOString();
    await db.insertInto("operators").values({ id: OPERATOR, name: "op", created_at: at }).execute();
    for (let i = 0; i < 5; i++)
      await db
        .insertInto("external_users")
        .values({
          id: rider(i).id,
          operator_id: OPERATOR,
          user_id: `u${i}`,
          phone_number: null,
          created_at: at,
          token_generation: i,
        })
        .execute();
  });
  afterEach(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  const log = pino({ level: "silent" });
  const stored = async () =>
    (await db.selectFrom("external_user_refresh_tokens").select("user_id").execute()).map((r) => r.user_id);
  /** Storing a token of the rider `i` fails, as a commit that cannot be made would. */
  const failFor = (i: number) =>
    sql`CREATE TRIGGER refuse_token BEFORE INSERT ON external_user_refresh_tokens
        WHEN NEW.user_id = ${sql.lit(rider(i).id)} BEGIN SELECT RAISE(ABORT, 'refused'); END`.execute(db);

  it("gives each of the sign-ins that arrive together its own working token and its rider's generation", async () => {
    const intake = createRefreshTokenIntake(db, { log });
    const riders = [0, 1, 2, 3, 4, 1].map(rider);
    const issued = await Promise.all(riders.map((r) => intake.issue(r, now)));
    expect(new Set(issued.map((t) => t.refreshToken)).size).toBe(riders.length);
    expect(issued.map((t) => t.generation)).toEqual([0, 1, 2, 3, 4, 1]);
    for (const [i, t] of issued.entries()) {
      const r = riders[i] as (typeof riders)[number];
      const found = await redeemRefreshToken(db, { token: t.refreshToken, serviceUserId: r.id }, now);
      expect(found).toEqual({ userId: r.id, operatorId: OPERATOR });
    }
  });

  it("keeps a rider's newest ten tokens when eleven sign-ins of that rider arrive together", async () => {
    const intake = createRefreshTokenIntake(db, { log });
    const issued = await Promise.all(Array.from({ length: 11 }, () => intake.issue(rider(0), now)));
    const live = await Promise.all(
      issued.map((t) => redeemRefreshToken(db, { token: t.refreshToken, serviceUserId: rider(0).id }, now)),
    );
    expect(live.filter((f) => f !== undefined)).toHaveLength(10);
    expect(await stored()).toHaveLength(10);
  });

  it("answers the sign-in whose token cannot be stored with the error, and stores the others of its batch", async () => {
    await failFor(2);
    const intake = createRefreshTokenIntake(db, { log });
    const outcomes = await Promise.allSettled([0, 1, 2, 3].map((i) => intake.issue(rider(i), now)));
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect((await stored()).sort()).toEqual([0, 1, 3].map((i) => rider(i).id));
  });

  it("answers every sign-in with an error and stores nothing when no commit can be made", async () => {
    await sql`CREATE TRIGGER refuse_all BEFORE INSERT ON external_user_refresh_tokens
              BEGIN SELECT RAISE(ABORT, 'refused'); END`.execute(db);
    const intake = createRefreshTokenIntake(db, { log });
    const outcomes = await Promise.allSettled([0, 1, 2].map((i) => intake.issue(rider(i), now)));
    expect(outcomes.every((o) => o.status === "rejected")).toBe(true);
    expect(await stored()).toEqual([]);
    // The intake goes on: the next sign-ins are stored once the store takes them again.
    await sql`DROP TRIGGER refuse_all`.execute(db);
    const next = await Promise.all([0, 1].map((i) => intake.issue(rider(i), now)));
    expect(next).toHaveLength(2);
    expect(await stored()).toHaveLength(2);
  });
});
