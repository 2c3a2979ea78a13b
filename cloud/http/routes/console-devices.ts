import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { Command } from "../../../shared/api/command.ts";
import { ErrorBody } from "../../../shared/api/common.ts";
import { ConsoleCommand, ConsoleDevicePage } from "../../../shared/api/console-devices.ts";
import { requestOrigin } from "../../audit/audit-log.ts";
import type { CommandService } from "../../commands/command-service.ts";
import { deviceTimeline, operatorFor } from "../../console/device-timeline.ts";
import { requireRole, staffPrincipal } from "../../console/staff-principal.ts";
import type { DeviceService } from "../../devices/device-service.ts";
import type { Db } from "../../store/db.ts";
import { staffSessionOf } from "../console-guard.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS, PATH_PARAM_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";
import { PreferHeader, requestedWait } from "../prefer-wait.ts";

const errors = { ...ANY_ROUTE_ERRORS, ...PATH_PARAM_ERRORS, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const WaitHeaders = z.object({ prefer: PreferHeader });
// Bearer tokens do not apply: the console guard reads the session cookie.
const config = { public: true };

/**
 * The console's device page and its operator functions (docs/decisions/console.md): the device service and
 * command service of the public API, acting as the signed-in staff member, so the throttle, supersession,
 * ownership and tenancy hold as they do for an integrator, and the audit log names the staff member.
 */
export function registerConsoleDeviceRoutes(
  app: FastifyInstance,
  deps: { db: Db; devices: DeviceService; commands: CommandService },
) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get("/console/api/devices/:device_id", {
    config,
    schema: {
      hide: true,
      params: z.object({ device_id: PathId }),
      response: { 200: ConsoleDevicePage, ...errors },
    },
    handler: async (request, reply) => {
      const session = staffSessionOf(request);
      const id = request.params.device_id;
      const operatorId = await operatorFor(deps.db, session.staff.operatorId, { device: id });
      const principal = staffPrincipal(session, operatorId, "read");
      const device = await deps.devices.get(principal, id);
      reply.header("cache-control", "no-store");
      return { device, timeline: await deviceTimeline(deps.db, principal, id) };
    },
  });

  r.post("/console/api/devices/:device_id/commands", {
    config,
    schema: {
      hide: true,
      params: z.object({ device_id: PathId }),
      headers: WaitHeaders,
      body: ConsoleCommand,
      response: { 200: Command, ...errors, ...BODY_ERRORS, 429: ErrorBody, 503: ErrorBody },
    },
    handler: async (request, reply) => {
      const session = staffSessionOf(request);
      requireRole(session, "act");
      const id = request.params.device_id;
      const operatorId = await operatorFor(deps.db, session.staff.operatorId, { device: id });
      const principal = staffPrincipal(session, operatorId, "act");
      const waiting = requestedWait(request, reply);
      const origin = requestOrigin(principal, String(request.id));
      const command = await deps.commands.create(principal, id, request.body, waiting?.wait, origin);
      if (waiting) reply.header("preference-applied", waiting.applied);
      return command;
    },
  });

  r.get("/console/api/commands/:command_id", {
    config,
    schema: {
      hide: true,
      params: z.object({ command_id: PathId }),
      headers: WaitHeaders,
      response: { 200: Command, ...errors },
    },
    handler: async (request, reply) => {
      const session = staffSessionOf(request);
      const id = request.params.command_id;
      const operatorId = await operatorFor(deps.db, session.staff.operatorId, { command: id });
      const waiting = requestedWait(request, reply);
      const command = await deps.commands.get(staffPrincipal(session, operatorId, "read"), id, waiting?.wait);
      if (waiting) reply.header("preference-applied", waiting.applied);
      return reply.header("cache-control", "no-store").send(command);
    },
  });
}
