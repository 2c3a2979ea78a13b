import type { Executor } from "../store/db.ts";
import type { IdempotencyKeysTable } from "../store/schema.ts";

/** A key belongs to one API client of one operator and one route: nobody else's keys can meet it. */
export type KeyScope = { operatorId: string; clientId: string; method: string; route: string; key: string };

export type StoredResponse = { status: number; headers: Record<string, string>; body: string };

/** A key's row as stored. */
export type KeyRecord = IdempotencyKeysTable;

/** What a reservation writes over a key: everything but the key itself. */
export type KeyReservation = Omit<KeyRecord, (typeof KEY_COLUMNS)[number]>;

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

/** Idempotency keys: only this repository reads or writes their table. */
export function idempotencyRepository(db: Executor) {
  const byKey = (s: KeyScope) => db.selectFrom("idempotency_keys").where((eb) => eb.and(keyOf(s)));
  /** A caller's rows (one API client of one operator); counted from the primary key's index alone. */
  const callerRows = (operatorId: string, clientId: string) =>
    db.selectFrom("idempotency_keys").where("operator_id", "=", operatorId).where("client_id", "=", clientId);

  return {
    find(scope: KeyScope): Promise<KeyRecord | undefined> {
      return byKey(scope).selectAll().executeTakeFirst();
    },

    /** Writes the reservation if nobody holds the key; false when a row was there. */
    async insertIfAbsent(scope: KeyScope, r: KeyReservation): Promise<boolean> {
      const inserted = await db
        .insertInto("idempotency_keys")
        .values({ ...keyOf(scope), ...r })
        .onConflict((oc) => oc.columns(KEY_COLUMNS).doNothing())
        .executeTakeFirst();
      return (inserted.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },

    /** Writes the reservation over the key's row if `holder` still holds it; false when another was first. */
    async takeOver(scope: KeyScope, holder: string, r: KeyReservation): Promise<boolean> {
      const taken = await db
        .updateTable("idempotency_keys")
        .set(r)
        .where((eb) => eb.and(keyOf(scope)))
        .where("holder", "=", holder)
        .executeTakeFirst();
      return taken.numUpdatedRows > 0n;
    },

    /** Keeps the response of `holder`'s request, if it still holds the key in progress. */
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

    /** Deletes the key if `holder` holds it (still in progress only, unless `anyState`). */
    async deleteHeld(scope: KeyScope, holder: string, o: { anyState?: boolean } = {}): Promise<void> {
      let q = db
        .deleteFrom("idempotency_keys")
        .where((eb) => eb.and(keyOf(scope)))
        .where("holder", "=", holder);
      if (!o.anyState) q = q.where("state", "=", "in_progress");
      await q.execute();
    },

    /** How many keys the caller has, expired ones included until they are purged. */
    async countOf(operatorId: string, clientId: string): Promise<number> {
      const { n } = await callerRows(operatorId, clientId)
        .select((eb) => eb.fn.countAll<number | string>().as("n"))
        .executeTakeFirstOrThrow();
      return Number(n);
    },

    /** When the caller's first key to expire expires (undefined when it has none). */
    async firstExpiryOf(operatorId: string, clientId: string): Promise<string | undefined> {
      const oldest = await callerRows(operatorId, clientId)
        .select((eb) => eb.fn.min("expires_at").as("at"))
        .executeTakeFirst();
      return oldest?.at ?? undefined;
    },

    /** Deletes keys expired at `at`, of one caller when given; returns how many. */
    async purgeExpired(at: string, caller?: { operatorId: string; clientId: string }): Promise<number> {
      let q = db.deleteFrom("idempotency_keys").where("expires_at", "<=", at);
      if (caller) q = q.where("operator_id", "=", caller.operatorId).where("client_id", "=", caller.clientId);
      const res = await q.executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}

export type IdempotencyRepository = ReturnType<typeof idempotencyRepository>;
