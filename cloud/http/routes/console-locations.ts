import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import { HEALTH_VALUES } from "../../../shared/domain/health.ts";
import { CONSOLE_CONNECTIONS, type ConsoleLocations } from "../../console/console-locations.ts";
import { staffSessionOf } from "../console-guard.ts";
import { ANY_ROUTE_ERRORS, PATH_PARAM_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

const Connection = z.enum(CONSOLE_CONNECTIONS);

const ListQuery = z.strictObject({
  /** Matches the name ("#code label") or the address, whatever the case. */
  q: z.string().max(200).optional(),
  connection: z.union([Connection, z.array(Connection)]).optional(),
});

const Summary = z.object({
  id: z.string(),
  operator_id: z.string(),
  code: z.string(),
  label: z.string(),
  name: z.string(),
  type: z.string(),
  address: z.string(),
  latitude: z.number(),
  longitude: z.number(),
  connection: Connection,
  offline_since: z.string(),
  devices: z.object({ available: z.number(), online: z.number(), total: z.number() }),
});

const Cell = z.object({
  id: z.string(),
  alias: z.string(),
  type: z.string(),
  state: z.object({ value: z.string(), changed_at: z.string(), timeout_at: z.string().nullable() }),
  lock_state: z.string(),
  hardware_state: z.string(),
  health: z.enum(HEALTH_VALUES).nullable(),
  dead_since: z.string().nullable(),
  last_seen_at: z.string().nullable(),
  sleep_state: z.string(),
  power_save_strategy: z.string(),
  /** The occupant's user id (null: none); absent where the role may not see it. */
  occupant: z.string().nullable().optional(),
});

const Gateway = z.object({
  id: z.string(),
  online: z.boolean(),
  health: z.enum(HEALTH_VALUES).nullable(),
  status: z.boolean().nullable(),
  status_at: z.string().nullable(),
  last_heartbeat_at: z.string().nullable(),
  outbox: z
    .object({
      id: z.string(),
      unconfirmed_from: z.number(),
      reported_at: z.string(),
      last_applied_seq: z.number().nullable(),
      depth: z.number().nullable(),
    })
    .nullable(),
  keys: z
    .object({
      cloud_version: z.number(),
      held_version: z.number().nullable(),
      confirmed_at: z.string().nullable(),
    })
    .nullable(),
  runtime_version: z.string().nullable(),
  started_at: z.string().nullable(),
  uptime_s: z.number().nullable(),
});

const Detail = z.object({
  now: z.string(),
  location: Summary,
  occupant_shown: z.boolean(),
  devices: z.array(Cell),
  gateways: z.array(Gateway),
});

const errors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody };

/** The console's location list and one location's devices and gateways (docs/decisions/console.md). */
export function registerConsoleLocationRoutes(app: FastifyInstance, locations: ConsoleLocations) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  // Bearer tokens do not apply: the console guard reads the session cookie.
  const config = { public: true };

  r.get("/console/api/locations", {
    config,
    schema: {
      hide: true,
      querystring: ListQuery,
      response: { 200: z.object({ data: z.array(Summary) }), ...errors },
    },
    handler: async (request) => {
      const { q, connection } = request.query;
      const staff = staffSessionOf(request).staff;
      const wanted =
        connection === undefined ? undefined : Array.isArray(connection) ? connection : [connection];
      return { data: await locations.list(staff, { text: q, connection: wanted }) };
    },
  });

  r.get("/console/api/locations/:id", {
    config,
    schema: {
      hide: true,
      params: z.object({ id: PathId }),
      response: { 200: Detail, ...errors, 404: ErrorBody, ...PATH_PARAM_ERRORS },
    },
    handler: (request) => locations.get(staffSessionOf(request).staff, request.params.id),
  });
}
