import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import type { ConsoleAlarmDetail, ConsoleAlarmList } from "../../../shared/api/console-alarms.ts";
import { AppError } from "../../../shared/api/errors.ts";
import { ALARM_SEVERITIES, ALARM_STATUSES, type AlarmActor } from "../../../shared/domain/alarm-machine.ts";
import { type StaffAction, staffMay } from "../../../shared/domain/staff-roles.ts";
import type { AlarmRecord } from "../../alarms/alarm-repository.ts";
import { type AlarmService, MAX_ALARM_LIMIT, MAX_NOTE_LENGTH } from "../../alarms/alarm-service.ts";
import { staffRepository } from "../../staff/staff-repository.ts";
import type { Db } from "../../store/db.ts";
import { staffSessionOf } from "../console-guard.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS, PATH_PARAM_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

const Actor = z.object({ kind: z.enum(["staff", "client", "system"]), id: z.string() });
const Done = z.object({ by: Actor, at: z.string(), note: z.string() }).nullable();

const Alarm = z.object({
  id: z.string(),
  operator_id: z.string(),
  location_id: z.string(),
  device_id: z.string().nullable(),
  subject: z.string(),
  kind: z.string(),
  severity: z.enum(ALARM_SEVERITIES),
  status: z.enum(ALARM_STATUSES),
  occurrences: z.number().int(),
  raised_at: z.string(),
  updated_at: z.string(),
  last_occurred_at: z.string(),
  acknowledged: Done,
  assignee: Actor.nullable(),
  cleared: Done,
  details: z.record(z.string(), z.unknown()),
  version: z.number().int(),
});

const Change = z.object({
  action: z.string(),
  by: Actor,
  at: z.string(),
  note: z.string(),
  assignee: Actor.nullable().optional(),
  status: z.enum(ALARM_STATUSES),
});

/** Staff ids are opaque in alarms; the console shows their emails, so answers carry the operator's staff. */
const StaffNames = z.record(z.string(), z.string());

/** Several values of a filter: repeated (`?status=A&status=B`) or comma-separated. */
const many = <T extends readonly [string, ...string[]]>(values: T) =>
  z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(",")).filter((s) => s !== ""))
    .pipe(z.array(z.enum(values)))
    .optional();

const ListQuery = z.strictObject({
  status: many(ALARM_STATUSES),
  severity: many(ALARM_SEVERITIES),
  location: z.string().max(100).optional(),
  device: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_ALARM_LIMIT).optional(),
  /** A superadmin names the operator whose alarms it reads; anyone else reads their own. */
  operator_id: z.string().max(100).optional(),
});
const OperatorQuery = z.strictObject({ operator_id: z.string().max(100).optional() });
const Params = z.object({ id: PathId });
const NoteBody = z.strictObject({ note: z.string().max(MAX_NOTE_LENGTH) });
/** The staff member's email, or null to unassign. */
const AssignBody = z.strictObject({ assignee: z.string().min(1).max(254).nullable() });

const errors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody, 403: ErrorBody };
const actionErrors = { ...errors, ...PATH_PARAM_ERRORS, ...BODY_ERRORS, 404: ErrorBody, 503: ErrorBody };

/** The operator a request acts for, once the staff member's role allows `action` there. */
function scopeOf(request: FastifyRequest, operatorId: string | undefined, action: StaffAction) {
  const { staff } = staffSessionOf(request);
  const operator = staff.operatorId ?? operatorId;
  if (operator === undefined)
    throw new AppError("ERRORS.VALIDATION_FAILED", "A superadmin names the operator: operator_id");
  if (!staffMay({ role: staff.role, operatorId: staff.operatorId }, action, operator))
    throw new AppError("ERRORS.FORBIDDEN", `A ${staff.role} may not ${action} here`);
  const by: AlarmActor = { kind: "staff", id: staff.id };
  return { operator, by, correlationId: String(request.id) };
}

/**
 * The alarm inbox for the console (docs/decisions/console.md): the alarm service's list, one alarm with its
 * history, and acknowledge, assign and clear, each for a role that may act and written to the audit log by
 * the service with the staff member as actor. Not part of the public API.
 */
export function registerConsoleAlarmRoutes(app: FastifyInstance, deps: { db: Db; alarms: AlarmService }) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const config = { public: true };
  const staffNames = async (operatorId: string) =>
    Object.fromEntries((await staffRepository(deps.db).list(operatorId)).map((s) => [s.id, s.email]));

  r.get("/console/api/alarms", {
    config,
    schema: {
      hide: true,
      querystring: ListQuery,
      response: { 200: z.object({ data: z.array(Alarm), staff: StaffNames }), ...errors },
    },
    handler: async (request): Promise<ConsoleAlarmList> => {
      const q = request.query;
      const { operator } = scopeOf(request, q.operator_id, "read");
      const data = await deps.alarms.list(operator, {
        ...(q.status ? { status: q.status } : {}),
        ...(q.severity ? { severity: q.severity } : {}),
        ...(q.location !== undefined ? { location_id: q.location } : {}),
        ...(q.device !== undefined ? { device_id: q.device } : {}),
        ...(q.limit !== undefined ? { limit: q.limit } : {}),
      });
      return { data, staff: await staffNames(operator) };
    },
  });

  r.get("/console/api/alarms/:id", {
    config,
    schema: {
      hide: true,
      params: Params,
      querystring: OperatorQuery,
      response: {
        200: z.object({ alarm: Alarm, history: z.array(Change), staff: StaffNames }),
        ...errors,
        ...PATH_PARAM_ERRORS,
        404: ErrorBody,
      },
    },
    handler: async (request): Promise<ConsoleAlarmDetail> => {
      const { operator } = scopeOf(request, request.query.operator_id, "read");
      const found = await deps.alarms.get(operator, request.params.id);
      return { ...found, staff: await staffNames(operator) };
    },
  });

  const acted = { 200: Alarm, ...actionErrors };

  r.post("/console/api/alarms/:id/acknowledge", {
    config,
    schema: { hide: true, params: Params, querystring: OperatorQuery, body: NoteBody, response: acted },
    handler: (request): Promise<AlarmRecord> => {
      const s = scopeOf(request, request.query.operator_id, "act");
      return deps.alarms.acknowledge(s.operator, request.params.id, s.by, request.body.note, s.correlationId);
    },
  });

  r.post("/console/api/alarms/:id/assign", {
    config,
    schema: { hide: true, params: Params, querystring: OperatorQuery, body: AssignBody, response: acted },
    handler: async (request): Promise<AlarmRecord> => {
      const s = scopeOf(request, request.query.operator_id, "act");
      const email = request.body.assignee;
      let assignee: AlarmActor | null = null;
      if (email !== null) {
        const staff = await staffRepository(deps.db).findByEmail(email);
        // Only a staff member who may act on this operator's alarms can be given one.
        if (!staff || staff.disabledAt !== null || !staffMay(staff, "act", s.operator))
          throw new AppError("ERRORS.VALIDATION_FAILED", `No staff member ${email} who may act on alarms`);
        assignee = { kind: "staff", id: staff.id };
      }
      return deps.alarms.assign(s.operator, request.params.id, s.by, assignee, s.correlationId);
    },
  });

  r.post("/console/api/alarms/:id/clear", {
    config,
    schema: { hide: true, params: Params, querystring: OperatorQuery, body: NoteBody, response: acted },
    handler: (request): Promise<AlarmRecord> => {
      const s = scopeOf(request, request.query.operator_id, "act");
      return deps.alarms.clear(s.operator, request.params.id, s.by, request.body.note, s.correlationId);
    },
  });
}
