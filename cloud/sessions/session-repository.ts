import type { Compilable } from "kysely";
import type { PaymentStatus } from "../../shared/domain/payment-machine.ts";
import {
  applySessionEvent,
  lastEventTime,
  PENDING_LIFETIME_MS,
  type SessionEvent,
  type SessionStatus,
  type SessionView,
  statusTime,
} from "../../shared/domain/session-machine.ts";
import type { Executor } from "../store/db.ts";
import { type QueryRunner, shapedQueries } from "../store/shaped-query.ts";
import type { SessionEventsTable, SessionsTable } from "../store/tables/session-tables.ts";

const MAX_CAS_ATTEMPTS = 5;
const IN_FLIGHT = ["NOT_SENT", "SENT", "RECEIVED"] as const;

export type SessionRow = SessionsTable;

export function viewOf(row: SessionRow): SessionView {
  const { status, booked_time, booked_until_time, start_time, end_time } = row;
  return { status, booked_time, booked_until_time, start_time, end_time };
}

export function toEvent(e: SessionEventsTable): SessionEvent {
  if (e.name === "book")
    return { name: "book", timestamp: e.occurred_at, booked_until: e.booked_until ?? "" };
  return { name: e.name, timestamp: e.occurred_at };
}

/**
 * Whose sessions a reader sees: an operator's, and for a rider only their own; pending sessions created
 * at or before `pendingAfter` have expired and are seen by nobody.
 */
export type SessionScope = { operatorId: string; userId?: string; pendingAfter: string };

/** Filters of a session list; `statusFrom`/`statusBefore` bound the time of the event that gave the status. */
export type SessionFilters = {
  locationId?: string;
  deviceId?: string;
  status?: SessionStatus;
  userId?: string;
  statusFrom?: string;
  statusBefore?: string;
  /** Keyset cursor: only sessions listed after this one, newest first. */
  after?: { createdAt: string; id: string };
};

/** A session with its payment's id and status (null until the session ends). */
export type ListedSession = SessionRow & { payment_id: string | null; payment_status: PaymentStatus | null };

/** Creation time before which a pending session has expired (spec: Limits, 30 days). */
export function pendingCutoff(now: Date): string {
  return new Date(now.getTime() - PENDING_LIFETIME_MS).toISOString();
}

/** The values of a list query, by name; which of them are present is the query's shape. */
type ListValues = Omit<SessionScope, "userId"> &
  Omit<SessionFilters, "after"> & {
    scopeUserId?: string;
    afterCreatedAt?: string;
    afterId?: string;
    limit: number;
    offset?: number;
  };

/**
 * Sessions, their events and payments: only this repository reads or writes their tables. Given `store`
 * (the store `db` is, not a transaction: one lives too briefly to gain), the list's two reads are compiled
 * once per shape and kept (cloud/store/shaped-query.ts); otherwise Kysely builds them at each call.
 */
export function sessionRepository(db: Executor, store?: QueryRunner) {
  const shaped = store ? shapedQueries(store) : null;
  const run = <Row, V extends Record<string, unknown>>(
    shape: string,
    values: V,
    build: (v: V) => Compilable<Row> & { execute(): Promise<Row[]> },
  ): Promise<Row[]> => (shaped ? shaped.run(shape, values, build) : build(values).execute());

  const find = (id: string): Promise<SessionRow | undefined> =>
    db.selectFrom("sessions").selectAll().where("id", "=", id).executeTakeFirst();

  /** The scope's sessions with their payments, in one query. */
  function listedIn(scope: SessionScope) {
    let q = db
      .selectFrom("sessions as s")
      .leftJoin("payments as p", "p.session_id", "s.id")
      .selectAll("s")
      .select(["p.id as payment_id", "p.status as payment_status"])
      .where("s.operator_id", "=", scope.operatorId)
      .where((eb) => eb.or([eb("s.status", "!=", "pending"), eb("s.created_at", ">", scope.pendingAfter)]));
    if (scope.userId !== undefined) q = q.where("s.user_id", "=", scope.userId);
    return q;
  }

  /** The list's query for the values present (`listed`): each filter given adds its condition. */
  function listQuery(v: ListValues) {
    let q = listedIn({ operatorId: v.operatorId, userId: v.scopeUserId, pendingAfter: v.pendingAfter });
    if (v.locationId !== undefined) q = q.where("s.location_id", "=", v.locationId);
    if (v.deviceId !== undefined) q = q.where("s.device_id", "=", v.deviceId);
    if (v.status !== undefined) q = q.where("s.status", "=", v.status);
    if (v.userId !== undefined) q = q.where("s.user_id", "=", v.userId);
    if (v.statusFrom !== undefined) q = q.where("s.status_at", ">=", v.statusFrom);
    if (v.statusBefore !== undefined) q = q.where("s.status_at", "<", v.statusBefore);
    const { afterCreatedAt, afterId } = v;
    if (afterCreatedAt !== undefined && afterId !== undefined)
      q = q.where((eb) =>
        eb.or([
          eb("s.created_at", "<", afterCreatedAt),
          eb.and([eb("s.created_at", "=", afterCreatedAt), eb("s.id", "<", afterId)]),
        ]),
      );
    q = q.orderBy("s.created_at", "desc").orderBy("s.id", "desc").limit(v.limit);
    if (v.offset !== undefined) q = q.offset(v.offset);
    return q;
  }

  return {
    find,

    /** The scope's sessions that pass the filters, newest first (created_at, then id). */
    listed(
      scope: SessionScope,
      f: SessionFilters,
      page: { limit: number; offset?: number },
    ): Promise<ListedSession[]> {
      const v: ListValues = {
        operatorId: scope.operatorId,
        pendingAfter: scope.pendingAfter,
        limit: page.limit,
      };
      if (scope.userId !== undefined) v.scopeUserId = scope.userId;
      if (f.locationId) v.locationId = f.locationId;
      if (f.deviceId) v.deviceId = f.deviceId;
      if (f.status) v.status = f.status;
      if (f.userId) v.userId = f.userId;
      if (f.statusFrom) v.statusFrom = f.statusFrom;
      if (f.statusBefore) v.statusBefore = f.statusBefore;
      if (f.after) {
        v.afterCreatedAt = f.after.createdAt;
        v.afterId = f.after.id;
      }
      if (page.offset) v.offset = page.offset;
      return run(`list:${Object.keys(v).join()}`, v, listQuery);
    },

    /** One of the scope's sessions; with `userId`, only when it is that user's. */
    findListed(scope: SessionScope, id: string, userId?: string): Promise<ListedSession | undefined> {
      let q = listedIn(scope).where("s.id", "=", id);
      if (userId !== undefined) q = q.where("s.user_id", "=", userId);
      return q.executeTakeFirst();
    },

    /** The attributes (JSON text) of the location a session is at: its session rules, max_user_sessions. */
    async locationAttrs(locationId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom("locations")
        .select("attrs")
        .where("id", "=", locationId)
        .executeTakeFirst();
      return row?.attrs;
    },

    /** Whether the device is the operator's: another operator's is exactly as missing as none. */
    async isOperatorsDevice(operatorId: string, deviceId: string): Promise<boolean> {
      const row = await db
        .selectFrom("devices")
        .select("id")
        .where("id", "=", deviceId)
        .where("operator_id", "=", operatorId)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** The scope's session on the device that is active, else its latest one. */
    currentOnDevice(scope: SessionScope, deviceId: string): Promise<ListedSession | undefined> {
      return listedIn(scope)
        .where("s.device_id", "=", deviceId)
        .orderBy((eb) => eb.case().when("s.status", "=", "active").then(0).else(1).end())
        .orderBy("s.created_at", "desc")
        .orderBy("s.id", "desc")
        .limit(1)
        .executeTakeFirst();
    },

    findByCommand(commandId: string): Promise<SessionRow | undefined> {
      return db.selectFrom("sessions").selectAll().where("command_id", "=", commandId).executeTakeFirst();
    },

    /** The device's sessions in the given statuses (at most one active and one booked in practice). */
    onDevice(deviceId: string, statuses: readonly SessionStatus[]): Promise<SessionRow[]> {
      return db
        .selectFrom("sessions")
        .selectAll()
        .where("device_id", "=", deviceId)
        .where("status", "in", statuses)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
    },

    /** The rider's booked session on the device, which a lock continues. */
    bookedBy(userId: string, deviceId: string): Promise<SessionRow | undefined> {
      return db
        .selectFrom("sessions")
        .selectAll()
        .where("device_id", "=", deviceId)
        .where("user_id", "=", userId)
        .where("status", "=", "booked")
        .executeTakeFirst();
    },

    /**
     * A pending session of the rider on the device that nothing drives any more (its lock or book failed),
     * and that has not expired: a retry takes it up again rather than leaving one more behind.
     */
    async dormantPending(userId: string, deviceId: string, now: Date): Promise<SessionRow | undefined> {
      const rows = await db
        .selectFrom("sessions")
        .leftJoin("commands", "commands.id", "sessions.command_id")
        .selectAll("sessions")
        .select("commands.state_value")
        .where("sessions.device_id", "=", deviceId)
        .where("sessions.user_id", "=", userId)
        .where("sessions.status", "=", "pending")
        .where("sessions.created_at", ">", pendingCutoff(now))
        .orderBy("sessions.created_at", "desc")
        .execute();
      const dormant = rows.find((r) => r.state_value === null || !IN_FLIGHT.includes(r.state_value as never));
      if (!dormant) return undefined;
      const { state_value: _, ...row } = dormant;
      return row;
    },

    /**
     * Sessions the rider holds at the location, for max_user_sessions: booked and active ones, and pending
     * ones whose lock or book is still under way.
     */
    async countHeld(operatorId: string, userId: string, locationId: string): Promise<number> {
      const row = await db
        .selectFrom("sessions")
        .leftJoin("commands", "commands.id", "sessions.command_id")
        .select((eb) => eb.fn.countAll<string | number>().as("n"))
        .where("sessions.operator_id", "=", operatorId)
        .where("sessions.user_id", "=", userId)
        .where("sessions.location_id", "=", locationId)
        .where((eb) =>
          eb.or([
            eb("sessions.status", "in", ["booked", "active"]),
            eb.and([eb("sessions.status", "=", "pending"), eb("commands.state_value", "in", IN_FLIGHT)]),
          ]),
        )
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async insert(row: SessionRow): Promise<void> {
      await db.insertInto("sessions").values(row).execute();
    },

    /** The fee an ended session was billed. */
    async setFee(id: string, fee: Pick<SessionRow, "fee_currency" | "fee_value">): Promise<void> {
      await db.updateTable("sessions").set(fee).where("id", "=", id).execute();
    },

    async setCommand(id: string, commandId: string, now: Date): Promise<void> {
      await db
        .updateTable("sessions")
        .set({ command_id: commandId, updated_at: now.toISOString() })
        .where("id", "=", id)
        .execute();
    },

    /**
     * Records an event: the machine decides on the session as stored, and the row's derived columns and
     * the immutable event are written together, with a compare-and-set on the status so two writers never
     * both record. Returns the session as written, or null when the machine refused the event.
     */
    async record(
      id: string,
      event: SessionEvent,
      now: Date,
      extra: Partial<Pick<SessionRow, "ended_by" | "fee_currency" | "fee_value">> = {},
    ): Promise<SessionRow | null> {
      for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
        const current = await find(id);
        if (!current) return null;
        // An event is never dated before the session's last: facts dated by two clocks could cross.
        const view = viewOf(current);
        const last = lastEventTime(view);
        const dated =
          last && Date.parse(event.timestamp) < Date.parse(last) ? { ...event, timestamp: last } : event;
        const next = applySessionEvent(view, dated);
        if (!next) return null;
        const updated_at = now.toISOString();
        const changes = { ...next, status_at: statusTime(next, current.created_at), ...extra, updated_at };
        const res = await db
          .updateTable("sessions")
          .set(changes)
          .where("id", "=", id)
          .where("status", "=", current.status)
          .where("updated_at", "=", current.updated_at)
          .executeTakeFirst();
        if (res.numUpdatedRows === 0n) continue;
        const seq = await db
          .selectFrom("session_events")
          .select((eb) => eb.fn.max("seq").as("last"))
          .where("session_id", "=", id)
          .executeTakeFirst();
        await db
          .insertInto("session_events")
          .values({
            session_id: id,
            seq: Number(seq?.last ?? 0) + 1,
            name: dated.name,
            occurred_at: dated.timestamp,
            booked_until: dated.name === "book" ? dated.booked_until : null,
          })
          .execute();
        return { ...current, ...changes };
      }
      throw new Error(`session ${id}: too much contention`);
    },

    /** The recorded events of each session, in order. */
    async eventsOf(ids: readonly string[]): Promise<Map<string, SessionEvent[]>> {
      const out = new Map<string, SessionEvent[]>();
      for (const id of ids) out.set(id, []);
      if (ids.length === 0) return out;
      const values: Record<string, string> = {};
      for (let i = 0; i < ids.length; i++) values[i] = ids[i] as string;
      const rows = await run(`events:${ids.length}`, values, (v) =>
        db
          .selectFrom("session_events")
          .selectAll()
          .where("session_id", "in", Object.values(v))
          .orderBy("session_id")
          .orderBy("seq"),
      );
      for (const r of rows) out.get(r.session_id)?.push(toEvent(r));
      return out;
    },
  };
}

export type SessionRepository = ReturnType<typeof sessionRepository>;
