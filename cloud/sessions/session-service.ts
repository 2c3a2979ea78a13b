import type {
  ConsoleSession,
  ConsoleSessionList,
  ConsoleSessionsQuery,
} from "../../shared/api/console-sessions.ts";
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
import type { PaymentStatus } from "../../shared/domain/payment-machine.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { type AuditOrigin, requestOrigin } from "../audit/audit-log.ts";
import { can, type Principal, requireClient } from "../auth/principal.ts";
import type { Db } from "../store/db.ts";
import { endSessionForced, markPaymentForced, type SessionEnded } from "./operator-actions.ts";
import { decodeCursor, encodeCursor } from "./pagination-token.ts";
import { paymentRepository } from "./payment-repository.ts";
import { PaymentRefused } from "./payments.ts";
import {
  presentConsoleSession,
  presentPayment,
  presentSessionV1,
  presentSessionV2,
  type SessionParts,
} from "./present-session.ts";
import { priceListRepository } from "./price-list-repository.ts";
import { presentPriceList } from "./price-lists.ts";
import {
  type ListedSession,
  pendingCutoff,
  type SessionFilters,
  type SessionRow,
  type SessionScope,
  sessionRepository,
} from "./session-repository.ts";

type Filters = { locationId?: string; status?: SessionRow["status"]; from?: string; to?: string };

const DAY_MS = 24 * 60 * 60 * 1000;
const notFound = (what: string, id: string) => new AppError("ERRORS.NOT_FOUND", `${what} ${id} not found`);

/** Ending a session or marking a payment is an operator function, as force commands are (S17). */
function requireOperatorFunction(principal: Principal, what: string): void {
  requireClient(principal, what);
  if (!can(principal, "DEVICE_ADMIN"))
    throw new AppError("ERRORS.FORBIDDEN", `${what} needs the DEVICE_ADMIN permission`);
}

const END_REFUSALS = {
  ended: "has already ended",
  pending: "is pending (its lock or book never succeeded): there is nothing to end",
} as const;

/**
 * Reads of sessions, payments and price lists. An external user sees only their own sessions, an S2S
 * client its operator's; anyone else's is "not found". Pending sessions past their 30 days are gone.
 */
export function createSessionService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  const sessions = sessionRepository(db, db);

  /** The caller's sessions: the operator's, and for a rider only their own; expired pending ones never. */
  function visible(principal: Principal): SessionScope {
    const pendingAfter = pendingCutoff(clock.now());
    return principal.kind === "user"
      ? { operatorId: principal.operatorId, userId: principal.id, pendingAfter }
      : { operatorId: principal.operatorId, pendingAfter };
  }

  /** location, status, and from/to (UTC days, inclusive) on the time of the event that gave the status. */
  function filtered(f: Filters): SessionFilters {
    const out: SessionFilters = { locationId: f.locationId, status: f.status };
    if (f.from) out.statusFrom = `${f.from}T00:00:00.000Z`;
    if (f.to) out.statusBefore = new Date(Date.parse(`${f.to}T00:00:00.000Z`) + DAY_MS).toISOString();
    return out;
  }

  /** The rows' events, read in one more query whatever the page size. */
  async function withParts(rows: ListedSession[]): Promise<SessionParts[]> {
    const events = await sessions.eventsOf(rows.map((r) => r.id));
    // The row as read (its payment's columns too: presenters pick what they show); copying each without
    // them cost more than presenting it.
    return rows.map((row) => ({
      row,
      events: events.get(row.id) ?? [],
      payment:
        row.payment_id && row.payment_status ? { id: row.payment_id, status: row.payment_status } : null,
    }));
  }

  async function one(row: ListedSession | undefined, what: string, id: string): Promise<SessionParts> {
    if (!row) throw notFound(what, id);
    const [parts] = await withParts([row]);
    return parts as SessionParts;
  }

  /**
   * A list page, newest first, with a keyset cursor on (created_at, id): both immutable, so sessions created
   * while a client pages land before its cursor and never shift what it has not read yet.
   */
  async function listed(
    principal: Principal,
    query: SessionsV2Query & { device_id?: string },
  ): Promise<{ pagination_token: string | null; data: SessionParts[] }> {
    const limit = query.limit ?? DEFAULT_SESSIONS_LIMIT;
    const filters = {
      caller: `${principal.kind}:${principal.id}`,
      user_id: query.user_id,
      location_id: query.location_id,
      ...(query.device_id ? { device_id: query.device_id } : {}),
      status: query.status,
      from: query.from,
      to: query.to,
    };
    const cursor = query.pagination_token ? decodeCursor(query.pagination_token, filters) : null;
    // A rider asking for another user's sessions gets none of them (an empty list, like any filter).
    if (principal.kind === "user" && query.user_id && query.user_id !== principal.id)
      return { pagination_token: null, data: [] };
    const f = filtered({
      locationId: query.location_id,
      status: query.status,
      from: query.from,
      to: query.to,
    });
    if (query.user_id) f.userId = query.user_id;
    if (query.device_id) f.deviceId = query.device_id;
    if (cursor) f.after = cursor;
    const rows = await sessions.listed(visible(principal), f, { limit: limit + 1 });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      pagination_token:
        rows.length > limit && last
          ? encodeCursor({ createdAt: last.created_at, id: last.id }, filters)
          : null,
      data: await withParts(page),
    };
  }

  return {
    /** v2 list (see `listed`). */
    async listV2(principal: Principal, query: SessionsV2Query): Promise<SessionV2List> {
      const { pagination_token, data } = await listed(principal, query);
      return { pagination_token, data: data.map(presentSessionV2) };
    },

    /** The console's list: the v2 list's rows and cursor, also by device, each with where it is. */
    async listConsole(principal: Principal, query: ConsoleSessionsQuery): Promise<ConsoleSessionList> {
      const { pagination_token, data } = await listed(principal, query);
      return { pagination_token, data: data.map(presentConsoleSession) };
    },

    async getConsole(principal: Principal, sessionId: string): Promise<ConsoleSession> {
      const row = await sessions.findListed(visible(principal), sessionId);
      return presentConsoleSession(await one(row, "Session", sessionId));
    },

    async getV2(principal: Principal, userId: string, sessionId: string): Promise<SessionV2> {
      const row = await sessions.findListed(visible(principal), sessionId, userId);
      return presentSessionV2(await one(row, "Session", sessionId));
    },

    /** Deprecated v1 list: active (by start time) or ended (by end time) sessions, by page. */
    async listV1(principal: Principal, query: SessionsV1Query): Promise<SessionV1[]> {
      const page = query.page ?? 1;
      const size = query.page_size ?? 100;
      const f = filtered({
        locationId: query.location_id,
        status: query.active === "true" ? "active" : "ended",
        from: query.from,
        to: query.to,
      });
      const rows = await sessions.listed(visible(principal), f, { limit: size, offset: (page - 1) * size });
      return (await withParts(rows)).map(presentSessionV1);
    },

    async getV1(principal: Principal, sessionId: string): Promise<SessionV1> {
      const row = await sessions.findListed(visible(principal), sessionId);
      return presentSessionV1(await one(row, "Session", sessionId));
    },

    /**
     * Deprecated: the device's current session as the caller sees it: the active one, else the latest
     * (docs/decisions/sessions-and-billing.md). 404 when the device is not the caller's operator's or has no such session.
     */
    async currentOnDeviceV1(principal: Principal, deviceId: string): Promise<SessionV1> {
      if (!(await sessions.isOperatorsDevice(principal.operatorId, deviceId)))
        throw notFound("Device", deviceId);
      const row = await sessions.currentOnDevice(visible(principal), deviceId);
      if (!row) throw new AppError("ERRORS.NOT_FOUND", `Device ${deviceId} has no session`);
      const [parts] = await withParts([row]);
      return presentSessionV1(parts as SessionParts);
    },

    /** A session's payment, for whoever sees the session. */
    async getPayment(principal: Principal, paymentId: string): Promise<Payment> {
      const payment = await paymentRepository(db).findForOperator(principal.operatorId, paymentId);
      const row = payment && (await sessions.findListed(visible(principal), payment.session_id));
      if (!payment || !row) throw notFound("Payment", paymentId);
      return presentPayment(payment, row);
    },

    /**
     * The operator's forced end of a booked or active session, with or without its fee; audited. No public
     * route takes it (the spec leaves forced ends to the operator console): the console calls it.
     */
    async end(
      principal: Principal,
      sessionId: string,
      opts: { withoutFee: boolean; comment?: string },
      origin: AuditOrigin = requestOrigin(principal),
    ): Promise<SessionEnded> {
      requireOperatorFunction(principal, "Ending a session");
      const act = { operatorId: principal.operatorId, origin, now: clock.now() };
      const r = await endSessionForced(db, act, sessionId, opts);
      if (!("refused" in r)) return r;
      if (r.refused === "not-found") throw notFound("Session", sessionId);
      if (r.refused === "changed")
        throw new AppError(
          "ERRORS.SERVICE_UNAVAILABLE",
          "The session changed meanwhile; try again",
          {},
          {
            "retry-after": "1",
          },
        );
      throw new AppError("ERRORS.BAD_REQUEST", `Session ${sessionId} ${END_REFUSALS[r.refused]}`);
    },

    /** Moves a payment of the built-in provider where the payment machine allows it; audited. */
    async markPayment(
      principal: Principal,
      paymentId: string,
      to: PaymentStatus,
      origin: AuditOrigin = requestOrigin(principal),
    ): Promise<{ from: PaymentStatus; to: PaymentStatus }> {
      requireOperatorFunction(principal, "Marking a payment");
      const act = { operatorId: principal.operatorId, origin, now: clock.now() };
      try {
        const moved = await markPaymentForced(db, act, paymentId, to);
        if (!moved) throw notFound("Payment", paymentId);
        return { from: moved.from, to };
      } catch (err) {
        if (err instanceof PaymentRefused)
          throw new AppError("ERRORS.BAD_REQUEST", `Payment ${paymentId}: ${err.message}`);
        throw err;
      }
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
