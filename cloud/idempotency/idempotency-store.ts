import { randomUUID } from "node:crypto";
import type { Db } from "../store/db.ts";
import {
  idempotencyRepository,
  type KeyRecord,
  type KeyReservation,
  type KeyScope,
  type StoredResponse,
} from "./idempotency-repository.ts";

/**
 * How long a key answers with its first result, how long a request may hold a key before it counts as
 * abandoned, and how many live keys (reserved or kept, not yet expired) one caller may hold, by kind.
 */
export type IdempotencyPolicy = {
  ttlMs: number;
  leaseMs: number;
  maxLiveKeys: { client: number; user: number };
};

/**
 * 24 h (the documented window); the lease is well above the longest a command POST holds its key: 2 s for
 * the broker, or a `Prefer: wait` of at most 30 s. Only successful requests keep a key, so a caller's live
 * keys are what it created in the last day: an API client may create 100,000 things a day with keys (about
 * one a second, all day), a rider 1,000 (docs/decisions/idempotency.md).
 */
export const IDEMPOTENCY_POLICY: IdempotencyPolicy = {
  ttlMs: 24 * 3_600_000,
  leaseMs: 60_000,
  maxLiveKeys: { client: 100_000, user: 1_000 },
};

export type { KeyScope, StoredResponse } from "./idempotency-repository.ts";

export type Reservation =
  /** The key is ours: run the request, then complete or release it with `holder`. */
  | { kind: "reserved"; holder: string }
  /** The same request already finished: answer with its response. */
  | { kind: "replay"; response: StoredResponse }
  /** The key was used with a different request. */
  | { kind: "reused" }
  /** The same request is still running elsewhere. */
  | { kind: "in_use" }
  /** The caller holds its most live keys; the oldest expires in `retryAfterMs`. Nothing was reserved. */
  | { kind: "limit"; retryAfterMs: number };

type Verdict = Exclude<Reservation, { kind: "reserved" | "limit" }> | { kind: "take_over" };

/**
 * What an existing row means for a new request with the same key (pure). An expired key behaves as new;
 * an in-progress one whose lease ran out was abandoned (its process died) and may be taken over.
 */
export function judgeExisting(row: KeyRecord, requestHash: string, now: Date): Verdict {
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

export function createIdempotencyStore(db: Db, policy: IdempotencyPolicy = IDEMPOTENCY_POLICY) {
  const keys = idempotencyRepository(db);

  function freshReservation(requestHash: string, now: Date): KeyReservation {
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

  /**
   * Whether a fresh reservation takes the caller past `maxLiveKeys`; if so it is given back. Counted after
   * the reservation, so two racing for the last place cannot both take it (both may be refused). Expired
   * rows are counted until purged, so the caller's are purged before it is refused.
   */
  async function overLimit(
    scope: KeyScope,
    holder: string,
    now: Date,
    maxLiveKeys: number,
  ): Promise<{ retryAfterMs: number } | null> {
    const { operatorId, clientId } = scope;
    if ((await keys.countOf(operatorId, clientId)) <= maxLiveKeys) return null;
    await keys.purgeExpired(now.toISOString(), { operatorId, clientId });
    if ((await keys.countOf(operatorId, clientId)) <= maxLiveKeys) return null;
    await keys.deleteHeld(scope, holder, { anyState: true });
    const oldest = await keys.firstExpiryOf(operatorId, clientId);
    const at = oldest ? Date.parse(oldest) : now.getTime() + policy.ttlMs;
    return { retryAfterMs: Math.max(0, at - now.getTime()) };
  }

  return {
    /**
     * Claims the key atomically: the insert wins, or the existing row decides. Taking over an expired or
     * abandoned row is a compare-and-set on its holder, so of two replicas racing for it one wins. A claim
     * that takes the caller past `maxLiveKeys` is given back and answered `limit`.
     */
    async reserve(
      scope: KeyScope,
      requestHash: string,
      now: Date,
      maxLiveKeys: number = Number.POSITIVE_INFINITY,
    ): Promise<Reservation> {
      const claimed = async (holder: string): Promise<Reservation> => {
        const over = await overLimit(scope, holder, now, maxLiveKeys);
        return over ? { kind: "limit", ...over } : { kind: "reserved", holder };
      };
      for (let attempt = 0; attempt < 3; attempt++) {
        const fresh = freshReservation(requestHash, now);
        if (await keys.insertIfAbsent(scope, fresh)) return claimed(fresh.holder);
        const row = await keys.find(scope);
        if (!row) continue; // purged between the insert and the read: try the insert again
        const verdict = judgeExisting(row, requestHash, now);
        if (verdict.kind !== "take_over") return verdict;
        // Taking over an expired key adds a live one; an abandoned one was counted already.
        if (await keys.takeOver(scope, row.holder, fresh)) return claimed(fresh.holder);
      }
      // Every attempt lost to another request with this key: it is the one running.
      return { kind: "in_use" };
    },

    /** Keeps the response for replays. False if the reservation was taken over meanwhile (lease ran out). */
    complete: (scope: KeyScope, holder: string, response: StoredResponse): Promise<boolean> =>
      keys.complete(scope, holder, response),

    /** Gives the key back: the request changed nothing (or its outcome is unknown), so a retry runs again. */
    release: (scope: KeyScope, holder: string): Promise<void> => keys.deleteHeld(scope, holder),

    /** Deletes expired keys; they already behave as new, this only keeps the table small. */
    purgeExpired: (now: Date): Promise<number> => keys.purgeExpired(now.toISOString()),
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
