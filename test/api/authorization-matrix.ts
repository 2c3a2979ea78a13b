/**
 * The authorization matrix (docs/security.md): for every route the cloud serves, in each situation that
 * matters to it, the status every kind of caller gets. `authorization.test.ts` runs each cell against the
 * real app on both stores and fails on a served route without a row; run this file to render the matrix
 * into docs/security.md (`npx tsx test/api/authorization-matrix.ts`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PERMISSIONS, type Permission } from "../../shared/api/permissions.ts";
import { GATEWAY_AUTHORIZATION } from "../support/gateway-authorization.ts";

/** Who calls. Operator A owns everything the rows name; riders A and B are on its closed list, the third is not. */
export type CallerKey =
  | "anonymous"
  | "riderA"
  | "riderB"
  | "riderOff"
  | `s2s:${"none" | "all"}`
  | `s2s:only:${Permission}`
  | `s2s:allBut:${Permission}`
  | "otherOperator";

export const CALLERS: readonly CallerKey[] = [
  "anonymous",
  "riderA",
  "riderB",
  "riderOff",
  "s2s:none",
  ...PERMISSIONS.map((p) => `s2s:only:${p}` as const),
  ...PERMISSIONS.map((p) => `s2s:allBut:${p}` as const),
  "s2s:all",
  "otherOperator",
];

/** The permissions an S2S caller of operator A holds; null for callers that are not its clients. */
export function permissionsOf(caller: CallerKey): readonly Permission[] | null {
  if (caller === "s2s:none") return [];
  if (caller === "s2s:all") return PERMISSIONS;
  if (caller.startsWith("s2s:only:")) return [caller.slice("s2s:only:".length) as Permission];
  if (caller.startsWith("s2s:allBut:")) return PERMISSIONS.filter((p) => `s2s:allBut:${p}` !== caller);
  return null;
}

/** What operator A's S2S clients get: one status, or one with a permission and another without it. */
export type S2sExpect = number | { needs: Permission; ok: number; without?: number };

export type Expect = {
  anonymous: number;
  /** Rider A: the holder in the rows that name a holding ("locked by rider A"). */
  riderA: number;
  riderB: number;
  /** The rider off the closed list; as rider B unless given. */
  riderOff?: number;
  s2s: S2sExpect;
  /** Operator B's client with every permission: another tenant. */
  otherOperator: number;
};

/**
 * The situation a row is run in. Devices: a locker at a location without access lists (`locker`), a door and
 * a locker at a bike house with a closed list (`houseDoor`, `houseLocker`), the camera GUARD (`guard`).
 */
export type Holding =
  | "free"
  | "locked by rider A"
  | "locked by someone unknown"
  | "locked by the rider off the list"
  | "booked by rider A"
  | "booked by rider B";

export type CommandCase = {
  device: "locker" | "houseDoor" | "houseLocker" | "guard";
  holding: Holding;
  /** The command body; `{riderA}` and `{unknownUser}` in user_id are filled in by the suite. */
  body: Record<string, unknown>;
};

export type Row = {
  /** `METHOD /path/{param}` as the route is registered (HEAD is GET without the body). */
  route: string;
  /** The situation, in words. */
  case: string;
  expect: Expect;
  /** For the command route: the device, its holding and the body. */
  command?: CommandCase;
  /** For other routes: the request body, with `{name}` placeholders the suite fills. */
  body?: unknown;
  /** A form body (the token endpoint). */
  form?: Record<string, string>;
  /** Query string, without `?`. */
  query?: string;
  /** Path parameters the suite does not fill from its fixture. */
  params?: Record<string, string>;
};

/** Every caller gets `status`: a route authenticated by its own means, or none. */
const everyone = (status: number): Expect => ({
  anonymous: status,
  riderA: status,
  riderB: status,
  s2s: status,
  otherOperator: status,
});

/** A read any authenticated caller of operator A may make; another tenant's object is not found. */
const operatorRead = (otherOperator = 404): Expect => ({
  anonymous: 401,
  riderA: 200,
  riderB: 200,
  s2s: 200,
  otherOperator,
});

/** Management: riders are refused before any lookup; operator A's clients may (with `s2s`). */
const management = (s2s: S2sExpect, otherOperator = 404): Expect => ({
  anonymous: 401,
  riderA: 403,
  riderB: 403,
  s2s,
  otherOperator,
});

const needs = (permission: Permission, ok = 200, without = 403): S2sExpect => ({
  needs: permission,
  ok,
  without,
});

const COMMANDS = "POST /device/v1/devices/{device_id}/commands";

/** A command row: riders' outcomes by who they are, operator A's clients', another tenant's 404. */
function command(
  caseText: string,
  c: CommandCase,
  riders: { a: number; b: number; off?: number },
  s2s: S2sExpect,
): Row {
  return {
    route: COMMANDS,
    case: caseText,
    command: c,
    expect: {
      anonymous: 401,
      riderA: riders.a,
      riderB: riders.b,
      riderOff: riders.off,
      s2s,
      otherOperator: 404,
    },
  };
}

export const ROWS: readonly Row[] = [
  // Tokens and external users authenticate by their own means: a bearer token neither helps nor hurts.
  {
    route: "POST /oauth2/token",
    case: "client credentials of operator A's client",
    form: { grant_type: "client_credentials", client_id: "a-basic", client_secret: "{secret}" },
    // A bearer token is a second Authorization besides the form's credentials (RFC 6749 §2.3).
    expect: { ...everyone(400), anonymous: 200 },
  },
  {
    route: "POST /external-users-auth/v1/sign-up",
    case: "no user_id",
    body: { operator_id: "{operatorA}" },
    expect: everyone(400),
  },
  {
    route: "POST /external-users-auth/v1/sign-in",
    case: "an empty challenge_token",
    body: { service_user_id: "{riderA}", operator_id: "{operatorA}", challenge_token: "" },
    expect: everyone(400),
  },
  {
    route: "POST /external-users-auth/v1/refresh",
    case: "a refresh token too short to be one",
    body: { service_user_id: "{riderA}", refresh_token: "short" },
    expect: everyone(400),
  },

  // Locations.
  { route: "GET /location/v1/locations", case: "the caller's locations", expect: operatorRead(200) },
  { route: "GET /location/v1/locations/{id}", case: "a location of operator A", expect: operatorRead() },
  {
    route: "PATCH /location/v1/locations/{id}",
    case: "label (no permission needed)",
    body: { label: "Lockers one" },
    expect: management(204),
  },
  {
    route: "PATCH /location/v1/locations/{id}",
    case: "max_user_sessions (superadmin)",
    body: { max_user_sessions: 2 },
    expect: management(needs("SUPERADMIN", 204)),
  },
  {
    route: "PATCH /location/v1/locations/{id}",
    case: "owner_id (organization management)",
    body: { owner_id: "{operatorA}" },
    expect: management(needs("ORGANIZATION_MANAGEMENT", 204)),
  },
  {
    route: "PATCH /location/v1/locations/{id}",
    case: "comment (restricted fields)",
    body: { comment: "internal note" },
    expect: management(needs("RESTRICTED_FIELDS", 204)),
  },
  {
    route: "PATCH /location/v1/locations/{id}",
    case: "public_tags (public tag management)",
    body: { public_tags: { add: ["covered"] } },
    expect: management(needs("PUBLIC_TAG_MANAGEMENT", 204)),
  },
  {
    route: "PATCH /location/v1/locations/{id}",
    case: "private_tags (private tag permissions)",
    body: { private_tags: { add: ["vip"] } },
    expect: management(needs("PRIVATE_TAG_MANAGEMENT", 204)),
  },
  { route: "GET /location/v1/public-areas", case: "the caller's public areas", expect: operatorRead(200) },
  {
    route: "GET /location/v1/public-areas/{public_area_id}/locations",
    case: "operator A's public area (no auth)",
    expect: everyone(200),
  },
  ...["subscriptions", "descriptions", "external-devices", "rental-devices", "organizations"].map(
    (link): Row => ({
      route: `GET /location/v1/locations/{id}/${link}`,
      case: "of a location of operator A",
      expect: operatorRead(),
    }),
  ),
  {
    route: "GET /location/v1/locations/{id}/audit",
    case: "of a location of operator A (a restricted field)",
    expect: management(needs("RESTRICTED_FIELDS")),
  },
  {
    route: "GET /location/v1/price-lists/{price_list_id}",
    case: "operator A's price list",
    expect: operatorRead(),
  },

  // Devices.
  {
    route: "GET /device/v1/locations/{location_id}/devices",
    case: "a location of operator A (another tenant sees an empty list)",
    expect: operatorRead(200),
  },
  { route: "GET /device/v1/devices/{device_id}", case: "a device of operator A", expect: operatorRead() },

  // Commands: who may do what to whose device (shared/domain/device-use.ts).
  command(
    "lock a free locker",
    { device: "locker", holding: "free", body: { command: "lock" } },
    { a: 200, b: 200 },
    200,
  ),
  command(
    "lock a locker rider A booked",
    { device: "locker", holding: "booked by rider A", body: { command: "lock" } },
    { a: 200, b: 403 },
    200,
  ),
  command(
    "lock a locker rider A locked",
    { device: "locker", holding: "locked by rider A", body: { command: "lock" } },
    { a: 400, b: 403 },
    400,
  ),
  command(
    "unlock a locker rider A locked",
    { device: "locker", holding: "locked by rider A", body: { command: "unlock" } },
    { a: 200, b: 403 },
    200,
  ),
  command(
    "unlock a locker locked for nobody known (by an integrator, a card or by hand)",
    { device: "locker", holding: "locked by someone unknown", body: { command: "unlock" } },
    { a: 403, b: 403 },
    200,
  ),
  command(
    "unlock a free locker",
    { device: "locker", holding: "free", body: { command: "unlock" } },
    { a: 400, b: 400 },
    400,
  ),
  command(
    "book a free locker",
    { device: "locker", holding: "free", body: { command: "book" } },
    { a: 200, b: 200 },
    200,
  ),
  command(
    "book a locker rider A booked",
    { device: "locker", holding: "booked by rider A", body: { command: "book" } },
    { a: 400, b: 403 },
    400,
  ),
  command(
    "book a locker rider A locked",
    { device: "locker", holding: "locked by rider A", body: { command: "book" } },
    { a: 400, b: 403 },
    400,
  ),
  command(
    "cancel-booking of rider A's booking",
    { device: "locker", holding: "booked by rider A", body: { command: "cancel-booking" } },
    { a: 200, b: 403 },
    403,
  ),
  command(
    "cancel-booking of a locker nobody booked",
    { device: "locker", holding: "free", body: { command: "cancel-booking" } },
    { a: 400, b: 400 },
    400,
  ),
  command(
    "lock a free locker for rider A (user_id)",
    { device: "locker", holding: "free", body: { command: "lock", user_id: "{riderA}" } },
    { a: 200, b: 403 },
    needs("ACT_ON_BEHALF_OF"),
  ),
  command(
    "lock for rider A (user_id) a locker rider B booked",
    { device: "locker", holding: "booked by rider B", body: { command: "lock", user_id: "{riderA}" } },
    { a: 403, b: 403 },
    403,
  ),
  command(
    "lock for a user_id that is no user of the operator",
    { device: "locker", holding: "free", body: { command: "lock", user_id: "{unknownUser}" } },
    { a: 403, b: 403 },
    needs("ACT_ON_BEHALF_OF", 400),
  ),
  command(
    "force-unlock a locker rider A locked",
    {
      device: "locker",
      holding: "locked by rider A",
      body: { command: "force-unlock", reason: "MAINTENANCE" },
    },
    { a: 403, b: 403 },
    needs("DEVICE_ADMIN"),
  ),
  command(
    "force-lock a free locker",
    { device: "locker", holding: "free", body: { command: "force-lock" } },
    { a: 403, b: 403 },
    needs("DEVICE_ADMIN"),
  ),
  command(
    "force-cancel-booking of rider A's booking",
    { device: "locker", holding: "booked by rider A", body: { command: "force-cancel-booking" } },
    { a: 403, b: 403 },
    needs("DEVICE_ADMIN"),
  ),
  command(
    "sync-device",
    { device: "locker", holding: "free", body: { command: "sync-device" } },
    { a: 403, b: 403 },
    needs("DEVICE_ADMIN"),
  ),
  command(
    "take-photo with the site's camera",
    { device: "guard", holding: "free", body: { command: "take-photo" } },
    { a: 403, b: 403 },
    needs("DEVICE_ADMIN"),
  ),
  command(
    "unlock the door of a bike house with a closed list",
    { device: "houseDoor", holding: "free", body: { command: "unlock" } },
    { a: 200, b: 200, off: 403 },
    200,
  ),
  command(
    "lock a free locker in a bike house with a closed list",
    { device: "houseLocker", holding: "free", body: { command: "lock" } },
    { a: 200, b: 200, off: 403 },
    200,
  ),
  command(
    "unlock, in a bike house with a closed list, the locker of a rider since taken off the list",
    { device: "houseLocker", holding: "locked by the rider off the list", body: { command: "unlock" } },
    { a: 403, b: 403, off: 200 },
    200,
  ),
  {
    route: "GET /device/v1/commands/{command_id}",
    case: "a command rider A sent",
    expect: { anonymous: 401, riderA: 200, riderB: 404, s2s: 200, otherOperator: 404 },
  },
  {
    route: "GET /device/v1/commands/{command_id}/photo",
    case: "the photo of a take-photo",
    expect: management(200),
  },

  // Whitelists: the operator's; integrators manage cards, targets take SUPERADMIN.
  {
    route: "GET /whitelist/v1/locations/{location_id}/whitelists",
    case: "a location of operator A",
    expect: management(200, 200),
  },
  { route: "GET /whitelist/v1/whitelists", case: "operator A's whitelists", expect: management(200, 200) },
  {
    route: "GET /whitelist/v1/whitelists/{whitelist_id}",
    case: "a whitelist of operator A",
    expect: management(200),
  },
  {
    route: "GET /whitelist/v1/whitelists/{whitelist_id}/entities",
    case: "its cards",
    expect: management(200),
  },
  {
    route: "POST /whitelist/v1/whitelists/{whitelist_id}/entities",
    case: "ADD a card it holds",
    body: { operation: "ADD", entities: [{ id: "0a0b", id_type: "rfid" }] },
    expect: management(204),
  },
  {
    route: "GET /whitelist/v1/whitelists/{whitelist_id}/targets",
    case: "its targets",
    expect: management(200),
  },
  {
    route: "POST /whitelist/v1/whitelists/{whitelist_id}/targets",
    case: "ADD the location it targets",
    body: {
      operation: "ADD",
      targets: [{ id: "{houseLocation}", type: "location", uri: "{houseLocationUri}" }],
    },
    expect: management(needs("SUPERADMIN", 204)),
  },

  // Access lists: the operator's management.
  {
    route: "GET /access-control/v1/mgmt/access-lists/{access_list_id}/users",
    case: "the bike house's closed list",
    expect: management(200),
  },
  {
    route: "POST /access-control/v1/mgmt/access-lists/{access_list_id}/users",
    case: "add rider A, already a member",
    body: { user_id: "{riderA}" },
    expect: management(204),
  },
  {
    route: "POST /access-control/v1/mgmt/access-lists/{access_list_id}/remove-user",
    case: "remove a member already removed",
    body: { user_id: "{riderGone}" },
    expect: management(204),
  },

  // Sessions: a rider's own; the operator's clients see all of the operator's.
  { route: "GET /session/v2/sessions", case: "the caller's sessions", expect: operatorRead(200) },
  {
    route: "GET /session/v2/users/{user_id}/sessions/{session_id}",
    case: "rider A's session",
    expect: { anonymous: 401, riderA: 200, riderB: 404, s2s: 200, otherOperator: 404 },
  },
  { route: "GET /session/v1/device-sessions", case: "the caller's sessions", expect: operatorRead(200) },
  {
    route: "GET /session/v1/device-sessions/{session_id}",
    case: "rider A's session",
    expect: { anonymous: 401, riderA: 200, riderB: 404, s2s: 200, otherOperator: 404 },
  },
  {
    route: "GET /session/v1/devices/{device_id}/sessions",
    case: "the device of rider A's session (a rider sees only their own)",
    expect: { anonymous: 401, riderA: 200, riderB: 404, s2s: 200, otherOperator: 404 },
  },
  {
    route: "GET /session/v1/payments/{payment_id}",
    case: "the payment of rider A's session",
    expect: { anonymous: 401, riderA: 200, riderB: 404, s2s: 200, otherOperator: 404 },
  },

  // The console authenticates staff by its session cookie: a bearer token neither helps nor hurts.
  {
    route: "POST /console/api/session",
    case: "a console sign-in without a password",
    body: { email: "nobody@example.com", password: "" },
    expect: everyone(400),
  },
  { route: "GET /console/api/session", case: "no console session cookie", expect: everyone(401) },
  { route: "DELETE /console/api/session", case: "no console session cookie", expect: everyone(401) },
  { route: "GET /console/api/locations", case: "no console session cookie", expect: everyone(401) },
  {
    route: "GET /console/api/locations/{id}",
    case: "a location of operator A, no console session cookie",
    expect: everyone(401),
  },
  { route: "GET /console/api/alarms", case: "no console session cookie", expect: everyone(401) },
  ...(["", "/acknowledge", "/assign", "/clear"] as const).map(
    (action): Row => ({
      route: `${action ? "POST" : "GET"} /console/api/alarms/{id}${action}`,
      case: "no console session cookie",
      params: { id: "00000000-0000-4000-8000-000000000000" },
      ...(action ? { body: action === "/assign" ? { assignee: null } : { note: "" } } : {}),
      expect: everyone(401),
    }),
  ),
  { route: "GET /console/api/sessions", case: "no console session cookie", expect: everyone(401) },
  {
    route: "GET /console/api/sessions/{id}",
    case: "no console session cookie",
    expect: everyone(401),
  },
  {
    route: "POST /console/api/sessions/{id}/end",
    case: "no console session cookie",
    body: { without_fee: true },
    expect: everyone(401),
  },
  {
    route: "POST /console/api/payments/{id}/status",
    case: "no console session cookie",
    body: { status: "PAID" },
    expect: everyone(401),
  },
  { route: "GET /console/api/audit", case: "no console session cookie", expect: everyone(401) },
  { route: "GET /console/api/devices/{device_id}", case: "no console session cookie", expect: everyone(401) },
  {
    route: "POST /console/api/devices/{device_id}/commands",
    case: "no console session cookie",
    body: { command: "force-lock" },
    expect: everyone(401),
  },
  {
    route: "GET /console/api/commands/{command_id}",
    case: "no console session cookie",
    expect: everyone(401),
  },
  { route: "GET /console/api/whitelists", case: "no console session cookie", expect: everyone(401) },
  {
    route: "GET /console/api/whitelists/{id}",
    case: "no console session cookie",
    params: { id: "00000000-0000-4000-8000-000000000000" },
    expect: everyone(401),
  },
  {
    route: "POST /console/api/whitelists/{id}/cards",
    case: "no console session cookie",
    params: { id: "00000000-0000-4000-8000-000000000000" },
    body: { id: "0a0b" },
    expect: everyone(401),
  },
  {
    route: "DELETE /console/api/whitelists/{id}/cards/{card_id}",
    case: "no console session cookie",
    params: { id: "00000000-0000-4000-8000-000000000000", card_id: "0a0b" },
    expect: everyone(401),
  },
  { route: "GET /console/api/access-lists", case: "no console session cookie", expect: everyone(401) },
  {
    route: "GET /console/api/access-lists/{id}",
    case: "no console session cookie",
    params: { id: "00000000-0000-4000-8000-000000000000" },
    expect: everyone(401),
  },
  ...(["members", "remove"] as const).map(
    (action): Row => ({
      route: `POST /console/api/access-lists/{id}/${action}`,
      case: "no console session cookie",
      params: { id: "00000000-0000-4000-8000-000000000000" },
      body: { phone_number: "+31612345678" },
      expect: everyone(401),
    }),
  ),
  { route: "GET /console/api/live", case: "no console session cookie", expect: everyone(401) },
  { route: "GET /console/api/riders/{id}", case: "no console session cookie", expect: everyone(401) },
  {
    route: "POST /console/api/riders/{id}/revoke-tokens",
    case: "no console session cookie",
    body: { reason: "lost phone" },
    expect: everyone(401),
  },
  { route: "GET /console/api/webhooks", case: "no console session cookie", expect: everyone(401) },
  { route: "GET /console/api/webhooks/{id}", case: "no console session cookie", expect: everyone(401) },
  {
    route: "POST /console/api/webhooks/{id}/deliveries/{message_id}/replay",
    case: "no console session cookie",
    params: { message_id: "msg_0" },
    expect: everyone(401),
  },
  {
    route: "POST /console/api/webhooks/{id}/test-event",
    case: "no console session cookie",
    expect: everyone(401),
  },

  // What runs the service: probes and documentation are public.
  { route: "GET /livez", case: "liveness", expect: everyone(200) },
  { route: "GET /readyz", case: "readiness", expect: everyone(200) },
  { route: "GET /healthz", case: "readiness", expect: everyone(200) },
  { route: "GET /openapi.json", case: "the OpenAPI document", expect: everyone(200) },
  { route: "GET /docs", case: "the interactive documentation", expect: everyone(200) },
  { route: "GET /docs/json", case: "its document", expect: everyone(200) },
  { route: "GET /docs/yaml", case: "its document", expect: everyone(200) },
  { route: "GET /docs/static/index.html", case: "its page (a redirect to /docs/)", expect: everyone(302) },
  { route: "GET /docs/static/swagger-initializer.js", case: "its script", expect: everyone(200) },
  {
    route: "GET /docs/*",
    case: "its assets",
    params: { "*": "static/swagger-ui.css" },
    expect: everyone(200),
  },
  // The operator console's page and assets are public: signing in happens in the page, against its own API.
  { route: "GET /console", case: "the console's page", expect: everyone(200) },
  {
    route: "GET /console/*",
    case: "the same page at a view's address",
    params: { "*": "alarms" },
    expect: everyone(200),
  },
  {
    route: "GET /console/assets/{name}",
    case: "an asset the console does not have",
    params: { name: "console-000000000000.js" },
    expect: everyone(404),
  },
];

/** The status `caller` should get on `row`. */
export function expectedStatus(row: Row, caller: CallerKey): number {
  const e = row.expect;
  switch (caller) {
    case "anonymous":
      return e.anonymous;
    case "riderA":
      return e.riderA;
    case "riderB":
      return e.riderB;
    case "riderOff":
      return e.riderOff ?? e.riderB;
    case "otherOperator":
      return e.otherOperator;
    default: {
      const held = permissionsOf(caller) ?? [];
      if (typeof e.s2s === "number") return e.s2s;
      return held.includes(e.s2s.needs) ? e.s2s.ok : (e.s2s.without ?? 403);
    }
  }
}

function s2sCell(s: S2sExpect): string {
  if (typeof s === "number") return String(s);
  return `${s.ok} with ${s.needs}, else ${s.without ?? 403}`;
}

/** A Markdown table with its columns padded as the formatter lays them out. */
function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`;
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** The matrix as a Markdown table (docs/security.md). */
export function renderMatrix(): string {
  const head = [
    "route",
    "case",
    "anonymous",
    "rider A",
    "rider B",
    "rider off the list",
    "S2S of operator A",
    "S2S of operator B",
  ];
  const rows = ROWS.map((r) => {
    const e = r.expect;
    return [
      `\`${r.route.replace(/\|/g, "\\|")}\``,
      r.case,
      String(e.anonymous),
      String(e.riderA),
      String(e.riderB),
      String(e.riderOff ?? e.riderB),
      s2sCell(e.s2s),
      String(e.otherOperator),
    ];
  });
  return table(head, rows);
}

/** A gateway's MQTT credentials, attempt by attempt (test/support/gateway-authorization.ts). */
export function renderGatewayTable(): string {
  return table(
    ["what gateway gw-a1 tries with its own credentials", "outcome"],
    GATEWAY_AUTHORIZATION.map((r) => [r.case.replace(/\|/g, "\\|"), r.expected]),
  );
}

export const SECURITY_DOC = fileURLToPath(new URL("../../docs/security.md", import.meta.url));

/** Replaces what stands between a table's markers with `body`. */
function between(doc: string, name: string, body: string): string {
  const start = `<!-- ${name}: rendered by test/api/authorization-matrix.ts -->`;
  const end = `<!-- end of the ${name} -->`;
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from < 0 || to < from)
    throw new Error(`docs/security.md has no markers for the ${name} (${start} … ${end})`);
  return `${doc.slice(0, from + start.length)}\n${body}\n${doc.slice(to)}`;
}

/** docs/security.md with both tables rendered in place. */
export function withMatrix(doc: string): string {
  return between(between(doc, "authorization matrix", renderMatrix()), "gateway table", renderGatewayTable());
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(SECURITY_DOC, withMatrix(readFileSync(SECURITY_DOC, "utf8")));
  console.log("docs/security.md: the authorization matrix and the gateway table rendered");
}
