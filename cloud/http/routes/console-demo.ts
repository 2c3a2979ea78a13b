import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import { DemoAction, DemoActionDone, DemoPanel } from "../../../shared/api/console-demo.ts";
import { AppError } from "../../../shared/api/errors.ts";
import { operatorsSeenBy, staffMay } from "../../../shared/domain/staff-roles.ts";
import type { DemoHardware } from "../../console/demo-hardware.ts";
import { staffSessionOf } from "../console-guard.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS } from "../error-responses.ts";

const errors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody, 403: ErrorBody };

/**
 * The demo hardware panel (docs/decisions/console.md): the simulated site of each location the staff member
 * sees, and one act on it for a role that may act. Registered only when the demo plugs its hardware in.
 */
export function registerConsoleDemoRoutes(app: FastifyInstance, hardware: DemoHardware) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  // Bearer tokens do not apply: the console guard reads the session cookie.
  const config = { public: true };

  r.get("/console/api/demo", {
    config,
    schema: { hide: true, response: { 200: DemoPanel, ...errors } },
    handler: (request, reply) => {
      const seen = operatorsSeenBy(staffSessionOf(request).staff);
      reply.header("cache-control", "no-store");
      return {
        locations: hardware.locations().filter((l) => seen === "all" || seen.includes(l.operator_id)),
      };
    },
  });

  r.post("/console/api/demo/actions", {
    config,
    schema: {
      hide: true,
      body: DemoAction,
      response: { 200: DemoActionDone, ...errors, ...BODY_ERRORS, 404: ErrorBody },
    },
    handler: async (request) => {
      const { staff } = staffSessionOf(request);
      const action = request.body;
      const seen = operatorsSeenBy(staff);
      const location = hardware
        .locations()
        .find((l) => l.id === action.location_id && (seen === "all" || seen.includes(l.operator_id)));
      // Another operator's location is missing, as everywhere in the console.
      if (!location) throw new AppError("ERRORS.NOT_FOUND", "No such location in the demo");
      if (!staffMay(staff, "act", location.operator_id))
        throw new AppError("ERRORS.FORBIDDEN", `A ${staff.role} may not act here`);
      const result = await hardware.act(action);
      if ("refused" in result) throw new AppError("ERRORS.BAD_REQUEST", result.refused);
      // A simulator's act, not an operator function: logged, not audited (docs/decisions/console.md).
      request.log.info({ staff_id: staff.id, demo_action: action }, "demo hardware panel");
      return { message: result.done };
    },
  });
}
