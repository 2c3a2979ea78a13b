import { randomUUID } from "node:crypto";
import type { Db } from "../store/db.ts";
import type { IdempotencyKeysTable } from "../store/schema.ts";

/** How long a key answers with its first result, and how long a request may hold a key before it counts as abandoned. */
export type IdempotencyPolicy = { ttlMs: number; leaseMs: number };

/**
 * 24 h (the documented window); the lease is well above the longest a command POST holds its key: 2 s for
 * the broker, or a `Prefer: wait` of at most 30 s.
 */
export const IDEMPOTENCY_POLICY: IdempotencyPolicy = { ttlMs: 24 * 3_600_000, leaseMs: 60_000 };

/** A key belongs to one API client of one operator and one route: nobody else's keys can meet it. */
export type KeyScope = { operatorId: string; clientId: string; method: string; route: string; key: string };

export type StoredResponse = { status: number; headers: Record<string, string>; body: string };

export type Reservation =
  /** The key is ours: run the request, then complete or release it with `holder`. */
  | { kind: "reserved"; holder: string }
  /** The same request already finished: answer with its response. */
  | { kind: "replay"; response: StoredResponse }
  /** The key was used with a different request. */
  | { kind: "reused" }
  /** The same request is still running elsewhere. */
  | { kind: "in_use" };

type Verdict = Exclude<Reservation, { kind: "reserved" }> | { kind: "take_over" };

/**
 * What an existing row means for a new request with the same key (pure). An expired key behaves as new;
 * an in-progress one whose lease ran out was abandoned (its process died) and may be taken over.
 */
export function judgeExisting(row: IdempotencyKeysTable, requestHash: string, now: Date): Verdict {
  const t = now.toISOString();
  if (row.expires_at <= t) return { kind: "take_over" };
  if (row.request_hash !== requestHash) return { kind: "reused" };
  if (row.state === "completed") {
    return {
      kind: "replay",
      response: {
        status: row.response_status ?? 200,
        headers: JSON.parse(row.response_headers ?? "{}") as Record<string, string>,
        body: row.response_body ?? "",
      },
    };
  }
  if (row.lease_until === null || row.lease_until <= t) return { kind: "take_over" };
  return { kind: "in_use" };
}

const KEY_COLUMNS = ["operator_id", "client_id", "method", "route", "idempotency_key"] as const;

function keyOf(s: KeyScope) {
  return {
    operator_id: s.operatorId,
    client_id: s.clientId,
    method: s.method,
    route: s.route,
    idempotency_key: s.key,
  };
}

export function createIdempotencyStore(db: Db, policy: IdempotencyPolicy = IDEMPOTENCY_POLICY) {
  function freshReservation(requestHash: string, now: Date) {
    return {
      request_hash: requestHash,
      state: "in_progress",
      holder: randomUUID(),
      lease_until: new Date(now.getTime() + policy.leaseMs).toISOString(),
      response_status: null,
      response_headers: null,
      response_body: null,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + policy.ttlMs).toISOString(),
    };
  }

  return {
    /**
     * Claims the key atomically: the insert wins, or the existing row decides. Taking over an expired or
     * abandoned row is a compare-and-set on its holder, so of two replicas racing for it one wins.
     */
    async reserve(scope: KeyScope, requestHash: string, now: Date): Promise<Reservation> {
      for (let attempt = 0; attempt < 3; attempt++) {
        const fresh = freshReservation(requestHash, now);
        const inserted = await db
          .insertInto("idempotency_keys")
          .values({ ...keyOf(scope), ...fresh })
          .onConflict((oc) => oc.columns(KEY_COLUMNS).doNothing())
          .executeTakeFirst();
        if ((inserted.numInsertedOrUpdatedRows ?? 0n) > 0n) return { kind: "reserved", holder: fresh.holder };
        const row = await db
          .selectFrom("idempotency_keys")
          .selectAll()
          .where((eb) => eb.and(keyOf(scope)))
          .executeTakeFirst();
        if (!row) continue; // purged between the insert and the read: try the insert again
        const verdict = judgeExisting(row, requestHash, now);
        if (verdict.kind !== "take_over") return verdict;
        const taken = await db
          .updateTable("idempotency_keys")
          .set(fresh)
          .where((eb) => eb.and(keyOf(scope)))
          .where("holder", "=", row.holder)
          .executeTakeFirst();
        if (taken.numUpdatedRows > 0n) return { kind: "reserved", holder: fresh.holder };
      }
      // Every attempt lost to another request with this key: it is the one running.
      return { kind: "in_use" };
    },

    /** Keeps the response for replays. False if the reservation was taken over meanwhile (lease ran out). */
    async complete(scope: KeyScope, holder: string, response: StoredResponse): Promise<boolean> {
      const res = await db
        .updateTable("idempotency_keys")
        .set({
          state: "completed",
          lease_until: null,
          response_status: response.status,
          response_headers: JSON.stringify(response.headers),
          response_body: response.body,
        })
        .where((eb) => eb.and(keyOf(scope)))
        .where("holder", "=", holder)
        .where("state", "=", "in_progress")
        .executeTakeFirst();
      return res.numUpdatedRows > 0n;
    },

    /** Gives the key back: the outcome is not final, so a retry runs the request again. */
    async release(scope: KeyScope, holder: string): Promise<void> {
      await db
        .deleteFrom("idempotency_keys")
        .where((eb) => eb.and(keyOf(scope)))
        .where("holder", "=", holder)
        .where("state", "=", "in_progress")
        .execute();
    },

    /** Deletes expired keys; they already behave as new, this only keeps the table small. */
    async purgeExpired(now: Date): Promise<number> {
      const res = await db
        .deleteFrom("idempotency_keys")
        .where("expires_at", "<=", now.toISOString())
        .executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
