import type { ConsoleAuditPage } from "../shared/api/console-audit.ts";
import type { ConsoleSession, ConsoleSessionList } from "../shared/api/console-sessions.ts";
import type { PaymentStatus } from "../shared/domain/payment-machine.ts";
import { call } from "./api.ts";

/** The console's calls for sessions, payments and the audit log (cloud/http/routes/console-*.ts). */

export type { ConsoleAuditPage, ConsoleSession, ConsoleSessionList };

/** `params` as a query string (with its `?`), leaving out empty values. */
export function queryOf(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

export const listSessions = (filters: Record<string, string | undefined>) =>
  call<ConsoleSessionList>("GET", `/console/api/sessions${queryOf(filters)}`);

export const getSession = (id: string) =>
  call<ConsoleSession>("GET", `/console/api/sessions/${encodeURIComponent(id)}`);

export const endSession = (id: string, withoutFee: boolean, reason: string) =>
  call<unknown>("POST", `/console/api/sessions/${encodeURIComponent(id)}/end`, {
    without_fee: withoutFee,
    ...(reason.trim() ? { reason: reason.trim() } : {}),
  });

export const markPayment = (id: string, status: PaymentStatus) =>
  call<unknown>("POST", `/console/api/payments/${encodeURIComponent(id)}/status`, { status });

export const listAudit = (filters: Record<string, string | undefined>) =>
  call<ConsoleAuditPage>("GET", `/console/api/audit${queryOf(filters)}`);
