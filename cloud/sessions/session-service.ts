import { AppError } from "../../shared/api/errors.ts";
import {
  DEFAULT_SESSIONS_LIMIT,
  type Payment,
  type PriceList,
  type SessionsV1Query,
  type SessionsV2Query,
  type SessionV1,
  type SessionV2,
  type SessionV2List,
} from "../../shared/api/session.ts";
import type { Clock } from "../../shared/time/clock.ts";
import type { Principal } from "../auth/principal.ts";
import type { Db } from "../store/db.ts";
import { decodeCursor, encodeCursor } from "./pagination-token.ts";
import { paymentRepository } from "./payments.ts";
import { presentPayment, presentSessionV1, presentSessionV2, type SessionParts } from "./present-session.ts";
import { presentPriceList, priceListRepository } from "./price-lists.ts";
import { pendingCutoff, type SessionRow, sessionRepository } from "./session-repository.ts";

/** Sessions with their payment's id and status (null until the session ends), in one query. */
function sessionsWithPayments(db: Db) {
  return db
    .selectFrom("sessions as s")
    .leftJoin("payments as p", "p.session_id", "s.id")
    .selectAll("s")
    .select(["p.id as payment_id", "p.status as payment_status"]);
}
type SessionQuery = ReturnType<typeof sessionsWithPayments>;
type ListedRow = Awaited<ReturnType<SessionQuery["executeTakeFirstOrThrow"]>>;
type Filters = { locationId?: string; status?: SessionRow["status"]; from?: string; to?: string };

const DAY_MS = 24 * 60 * 60 * 1000;
const notFound = (what: string, id: string) => new AppError("ERRORS.NOT_FOUND", `${what} ${id} not found`);

/**
 * Reads of sessions, payments and price lists. An external user sees only their own sessions, an S2S
 * client its operator's; anyone else's is "not found". Pending sessions past their 30 days are gone.
 */
export function createSessionService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  /** The caller's sessions: the operator's, and for a rider only their own; expired pending ones never. */
  function visible(principal: Principal): SessionQuery {
    const cutoff = pendingCutoff(clock.now());
    let q = sessionsWithPayments(db)
      .where("s.operator_id", "=", principal.operatorId)
      .where((eb) => eb.or([eb("s.status", "!=", "pending"), eb("s.created_at", ">", cutoff)]));
    if (principal.kind === "user") q = q.where("s.user_id", "=", principal.id);
    return q;
  }

  /** location, status, and from/to (UTC days, inclusive) on the time of the event that gave the status. */
  function filtered(q: SessionQuery, f: Filters): SessionQuery {
    if (f.locationId) q = q.where("s.location_id", "=", f.locationId);
    if (f.status) q = q.where("s.status", "=", f.status);
    if (f.from) q = q.where("s.status_at", ">=", `${f.from}T00:00:00.000Z`);
    if (f.to) {
      const next = new Date(Date.parse(`${f.to}T00:00:00.000Z`) + DAY_MS).toISOString();
      q = q.where("s.status_at", "<", next);
    }
    return q;
  }

  /** The rows' events, read in one more query whatever the page size. */
  async function withParts(rows: ListedRow[]): Promise<SessionParts[]> {
    const events = await sessionRepository(db).eventsOf(rows.map((r) => r.id));
    return rows.map(({ payment_id, payment_status, ...row }) => ({
      row,
      events: events.get(row.id) ?? [],
      payment: payment_id && payment_status ? { id: payment_id, status: payment_status } : null,
    }));
  }

  async function one(q: SessionQuery, what: string, id: string): Promise<SessionParts> {
    const row = await q.executeTakeFirst();
    if (!row) throw notFound(what, id);
    const [parts] = await withParts([row]);
    return parts as SessionParts;
  }

  return {
    /**
     * v2 list, newest first, with a keyset cursor on (created_at, id): both immutable, so sessions created
     * while a client pages land before its cursor and never shift what it has not read yet.
     */
    async listV2(principal: Principal, query: SessionsV2Query): Promise<SessionV2List> {
      const limit = query.limit ?? DEFAULT_SESSIONS_LIMIT;
      const filters = {
        caller: `${principal.kind}:${principal.id}`,
        user_id: query.user_id,
        location_id: query.location_id,
        status: query.status,
        from: query.from,
        to: query.to,
      };
      const cursor = query.pagination_token ? decodeCursor(query.pagination_token, filters) : null;
      // A rider asking for another user's sessions gets none of them (an empty list, like any filter).
      if (principal.kind === "user" && query.user_id && query.user_id !== principal.id)
        return { pagination_token: null, data: [] };
      let q = filtered(visible(principal), {
        locationId: query.location_id,
        status: query.status,
        from: query.from,
        to: query.to,
      });
      if (query.user_id) q = q.where("s.user_id", "=", query.user_id);
      if (cursor)
        q = q.where((eb) =>
          eb.or([
            eb("s.created_at", "<", cursor.createdAt),
            eb.and([eb("s.created_at", "=", cursor.createdAt), eb("s.id", "<", cursor.id)]),
          ]),
        );
      const rows = await q
        .orderBy("s.created_at", "desc")
        .orderBy("s.id", "desc")
        .limit(limit + 1)
        .execute();
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        pagination_token:
          rows.length > limit && last
            ? encodeCursor({ createdAt: last.created_at, id: last.id }, filters)
            : null,
        data: (await withParts(page)).map(presentSessionV2),
      };
    },

    async getV2(principal: Principal, userId: string, sessionId: string): Promise<SessionV2> {
      const q = visible(principal).where("s.id", "=", sessionId).where("s.user_id", "=", userId);
      return presentSessionV2(await one(q, "Session", sessionId));
    },

    /** Deprecated v1 list: active (by start time) or ended (by end time) sessions, by page. */
    async listV1(principal: Principal, query: SessionsV1Query): Promise<SessionV1[]> {
      const page = query.page ?? 1;
      const size = query.page_size ?? 100;
      const rows = await filtered(visible(principal), {
        locationId: query.location_id,
        status: query.active === "true" ? "active" : "ended",
        from: query.from,
        to: query.to,
      })
        .orderBy("s.created_at", "desc")
        .orderBy("s.id", "desc")
        .limit(size)
        .offset((page - 1) * size)
        .execute();
      return (await withParts(rows)).map(presentSessionV1);
    },

    async getV1(principal: Principal, sessionId: string): Promise<SessionV1> {
      return presentSessionV1(
        await one(visible(principal).where("s.id", "=", sessionId), "Session", sessionId),
      );
    },

    /**
     * Deprecated: the device's current session as the caller sees it: the active one, else the latest
     * (docs/decisions/sessions-and-billing.md). 404 when the device is not the caller's operator's or has no such session.
     */
    async currentOnDeviceV1(principal: Principal, deviceId: string): Promise<SessionV1> {
      const device = await db
        .selectFrom("devices")
        .select("id")
        .where("id", "=", deviceId)
        .where("operator_id", "=", principal.operatorId)
        .executeTakeFirst();
      if (!device) throw notFound("Device", deviceId);
      const q = visible(principal)
        .where("s.device_id", "=", deviceId)
        .orderBy((eb) => eb.case().when("s.status", "=", "active").then(0).else(1).end())
        .orderBy("s.created_at", "desc")
        .orderBy("s.id", "desc")
        .limit(1);
      const row = await q.executeTakeFirst();
      if (!row) throw new AppError("ERRORS.NOT_FOUND", `Device ${deviceId} has no session`);
      const [parts] = await withParts([row]);
      return presentSessionV1(parts as SessionParts);
    },

    /** A session's payment, for whoever sees the session. */
    async getPayment(principal: Principal, paymentId: string): Promise<Payment> {
      const payment = await paymentRepository(db).findForOperator(principal.operatorId, paymentId);
      const row =
        payment && (await visible(principal).where("s.id", "=", payment.session_id).executeTakeFirst());
      if (!payment || !row) throw notFound("Payment", paymentId);
      return presentPayment(payment, row);
    },

    /** Price lists are public to the operator's callers, riders included: they show what parking costs. */
    async getPriceList(principal: Principal, id: string): Promise<PriceList> {
      const row = await priceListRepository(db).findForOperator(principal.operatorId, id);
      if (!row) throw notFound("Price list", id);
      return presentPriceList(row);
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
