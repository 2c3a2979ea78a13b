import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { Command, CommandRequest } from "../../../shared/api/command.ts";
import { ErrorBody } from "../../../shared/api/common.ts";
import { Device, DeviceList } from "../../../shared/api/device.ts";
import { requestOrigin } from "../../audit/audit-log.ts";
import type { CommandService } from "../../commands/command-service.ts";
import type { DeviceService } from "../../devices/device-service.ts";
import { principalOf } from "../authenticate.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS, PATH_PARAM_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";
import { PREFERENCE_APPLIED_HEADER, PreferHeader, requestedWait } from "../prefer-wait.ts";

/**
 * Reads answer no 403 (a client sees every device and command of its operator; another operator's is not
 * found). The device list has no 404 (spec: Errors): an unknown, foreign or malformed location id lists
 * nothing.
 */
const listErrors = { ...ANY_ROUTE_ERRORS, ...PATH_PARAM_ERRORS, 401: ErrorBody };
const errors = { ...listErrors, 404: ErrorBody };

/** The command routes take `Prefer: wait` and say in their answer when they applied it. */
const WaitHeaders = z.object({ prefer: PreferHeader });
const WaitedCommand = Command.meta({ headers: PREFERENCE_APPLIED_HEADER });

export function registerDeviceRoutes(app: FastifyInstance, devices: DeviceService, commands: CommandService) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get("/device/v1/locations/:location_id/devices", {
    schema: {
      tags: ["devices"],
      summary: "List the devices of a location",
      params: z.object({ location_id: PathId }),
      response: { 200: DeviceList, ...listErrors },
    },
    handler: async (request) => ({
      data: await devices.listByLocation(principalOf(request), request.params.location_id),
      uri: `/device/v1/locations/${request.params.location_id}/devices`,
    }),
  });

  r.get("/device/v1/devices/:device_id", {
    schema: {
      tags: ["devices"],
      summary: "Get a device",
      params: z.object({ device_id: PathId }),
      response: { 200: Device, ...errors },
    },
    handler: (request) => devices.get(principalOf(request), request.params.device_id),
  });

  r.post("/device/v1/devices/:device_id/commands", {
    config: { idempotent: true },
    schema: {
      tags: ["commands"],
      summary: "Send a command to a device",
      description:
        "Returns the command record: at once (normally SENT), or with `Prefer: wait=N` once it is SUCCESS or ERROR " +
        "or N seconds (at most 30) have passed. Without a wait, poll GET command every 1–2 s until SUCCESS or ERROR, " +
        "or GET it with `Prefer: wait`. A replay of an Idempotency-Key answers at once with the first response. " +
        "A second lock or unlock on one device within 3 s (15 s with a power-save strategy) answers 429 ERRORS.LOCK_COMMAND_THROTTLED.",
      params: z.object({ device_id: PathId }),
      headers: WaitHeaders,
      body: CommandRequest,
      response: {
        200: WaitedCommand,
        ...errors,
        ...BODY_ERRORS,
        403: ErrorBody,
        429: ErrorBody,
        503: ErrorBody,
      },
    },
    handler: async (request, reply) => {
      const waiting = requestedWait(request, reply);
      const principal = principalOf(request);
      const command = await commands.create(
        principal,
        request.params.device_id,
        request.body,
        waiting?.wait,
        requestOrigin(principal, String(request.id)),
      );
      if (waiting) reply.header("preference-applied", waiting.applied);
      return command;
    },
  });

  r.get("/device/v1/commands/:command_id", {
    schema: {
      tags: ["commands"],
      summary: "Get a command",
      description:
        "With `Prefer: wait=N`, answers once the command is SUCCESS or ERROR (at once if it already is) or N " +
        "seconds (at most 30) have passed, with the command as it is then.",
      params: z.object({ command_id: PathId }),
      headers: WaitHeaders,
      response: { 200: WaitedCommand, ...errors },
    },
    handler: async (request, reply) => {
      const waiting = requestedWait(request, reply);
      const command = await commands.get(principalOf(request), request.params.command_id, waiting?.wait);
      if (waiting) reply.header("preference-applied", waiting.applied);
      return command;
    },
  });
}
