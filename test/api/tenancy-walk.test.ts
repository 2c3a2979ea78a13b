import { randomUUID } from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import type { Database } from "../../cloud/store/schema.ts";
import { SessionV2List } from "../../shared/api/session.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A, OP_B } from "../support/fixture-site.ts";
import { type Caller, client, type RiderFlow, rider, riderFlow } from "../support/rider-sessions.ts";

/**
 * Issue 8's tenancy rule ("Done when": a tenancy test walks every {id} route of this issue with another
 * operator's token and with another rider's token and sees only "not found"), decided in docs/decisions/
 * (sessions-and-billing.md → Tenancy, access-lists.md → Statuses of the endpoints, external-users.md → riders see
 * only the commands they sent).
 *
 * The routes come from the app's own OpenAPI document, so a new {id} route of these families is walked
 * without touching this file — or fails here until it has a fixture id (and, for a POST, a valid body).
 */

type OpenApi = { paths: Record<string, Record<string, unknown>> };
type Route = { method: "GET" | "POST"; path: string };

/**
 * The {id} routes of issue 8 (sessions, payments, price lists, access lists, riders' own commands) and of
 * issue 9 (whitelists).
 */
const selected = (path: string) =>
  path.includes("{") &&
  (path.startsWith("/session/") ||
    path.startsWith("/access-control/") ||
    path.startsWith("/location/v1/price-lists/") ||
    path.startsWith("/session/v1/payments/") ||
    path.startsWith("/whitelist/v1/whitelists/") || // issue 9: a whitelist, its cards and its targets
    path === "/device/v1/commands/{command_id}" ||
    path === "/device/v1/commands/{command_id}/photo"); // issue 9: a take-photo's photo

/** The app's OpenAPI document, read once before the suites are collected (it does not depend on the data). */
async function walkedRoutes(): Promise<Route[]> {
  const h = await startCloudHarness();
  try {
    const doc = h.app.swagger() as unknown as OpenApi;
    return Object.entries(doc.paths)
      .filter(([path]) => selected(path))
      .flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => {
          const method = m.toUpperCase();
          if (method !== "GET" && method !== "POST") throw new Error(`${method} ${path}: not walked yet`);
          return { method, path } as Route;
        }),
      );
  } finally {
    await h.close();
  }
}

const ROUTES = await walkedRoutes();
const label = (r: Route) => `${r.method} ${r.path}`;

/** Who may read what (docs/decisions/authentication.md, Tenancy). */
type Family = "rider-owned" | "operator-read" | "operator-only";
const familyOf = (path: string): Family =>
  path.startsWith("/access-control/") || path.startsWith("/whitelist/") || path.endsWith("/photo")
    ? "operator-only" // management: 403 to any rider token, before any lookup
    : path.startsWith("/location/v1/price-lists/")
      ? "operator-read" // the operator's clients and riders read it; anyone else's is 404
      : "rider-owned"; // sessions, payments, commands: the rider's own, or the operator's for its clients

/** The access list at location T1 of operator A (a fixed id, as a manifest declares it). */
const LIST = "a7a7a7a7-0000-4000-8000-0000000000a7";
/** A whitelist of operator A targeting T1, with one card (declared in the manifest, as the operator does). */
const WHITELIST = "a7a7a7a7-0000-4000-8000-0000000000b7";
/** The priced locker R1 parks at, and a locker of A that nobody has a session on. */
const PRICED = fx.device("L1", "2");
const IDLE = fx.device("L1", "3");
/** The GUARD of gw-a1 (it has a camera), and the photo operator A's client has it take. */
const GUARD = fx.guard("gw-a1");
const PHOTO = Buffer.from([0xff, 0xd8, 0xff, 0xfe, 0x00, 0x07, 0x77, 0x61, 0x6c, 0x6b, 0x00, 0xff, 0xd9]);
const HOUR = 3_600_000;

let h: CloudHarness;
let f: RiderFlow;
/** Operator A's client with every permission (owner of the price list and the access list). */
let adminA: Caller;
/** Operator B's client with every permission: another operator. */
let adminB: Caller;
/** R1 owns the session, its payment and the command; R2 is another rider of A; RB a rider of B. */
let r1: Caller;
let r2: Caller;
let rb: Caller;
/** The fixture id of every path parameter; the first value is the owner's, strangers try them all. */
let ids: Record<string, string[]>;
/** The take-photo command whose photo the photo route is walked with. */
let photoCommand: string;
/** The ids a route is walked with: a photo's command is a take-photo. */
const idsOf = (route: Route) =>
  route.path.endsWith("/photo") ? { ...ids, command_id: [photoCommand] } : ids;

/** The values of the route's parameters: every combination of the candidates (fails on a parameter without one). */
function fills(path: string, values: Record<string, string[]>): Record<string, string>[] {
  let combos: Record<string, string>[] = [{}];
  for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
    const options = values[name as string];
    if (!options?.length) throw new Error(`${path}: no fixture id for {${name}}: add one to this walk`);
    combos = combos.flatMap((c) => options.map((v) => ({ ...c, [name as string]: v })));
  }
  return combos;
}

const urlOf = (path: string, fill: Record<string, string>) =>
  path.replace(/\{([^}]+)\}/g, (_, name: string) => fill[name] as string);

/** A valid body for each POST route (a stranger's call would change something if it got through). */
function bodyOf(route: Route): Record<string, unknown> | undefined {
  if (route.method === "GET") return undefined;
  const bodies: Record<string, Record<string, unknown>> = {
    // Adds R2, who is not a member, with a comment: any effect shows in the members.
    "/access-control/v1/mgmt/access-lists/{access_list_id}/users": {
      user_id: r2.id,
      comment: "added by a stranger",
    },
    // Removes R1, the member, at once.
    "/access-control/v1/mgmt/access-lists/{access_list_id}/remove-user": { user_id: r1.id, remove_now: true },
    // Adds a card to the whitelist, and the idle locker as a target (the owner holds SUPERADMIN).
    "/whitelist/v1/whitelists/{whitelist_id}/entities": {
      operation: "ADD",
      entities: [{ id: "0a0b0c0d", id_type: "rfid", comment: "added by a stranger" }],
    },
    "/whitelist/v1/whitelists/{whitelist_id}/targets": {
      operation: "ADD",
      targets: [{ id: IDLE, type: "device", uri: `/device/v1/devices/${IDLE}` }],
    },
  };
  const body = bodies[route.path];
  if (!body) throw new Error(`${label(route)}: no valid body for this walk: add one`);
  return body;
}

const call = (who: Caller, route: Route, fill: Record<string, string>) =>
  f.request(who, urlOf(route.path, fill), route.method, bodyOf(route));

/** What a caller can compare between two answers: status, headers and body, with the filled ids named. */
function shape(res: LightMyRequestResponse, fill: Record<string, string>) {
  let body = res.body;
  for (const [name, value] of Object.entries(fill)) body = body.split(value).join(`{${name}}`);
  const parsed = JSON.parse(body) as Record<string, unknown>;
  delete parsed.correlation_id;
  const { date: _d, "x-correlation-id": _c, "content-length": _l, ...headers } = res.headers;
  return { status: res.statusCode, headers, body: parsed };
}

/** Every row of the tables these routes could touch, in a stable order. */
async function snapshot(): Promise<Record<string, string[]>> {
  const tables: (keyof Database)[] = [
    "sessions",
    "session_events",
    "payments",
    "payment_changes",
    "price_lists",
    "commands",
    "devices",
    "access_lists",
    "access_list_members",
    "access_list_invites",
    "external_users",
    "idempotency_keys",
    "whitelists",
    "whitelist_entities",
    "whitelist_targets",
    "photos",
    "photo_parts",
  ];
  const out: Record<string, string[]> = {};
  for (const t of tables) {
    const rows = await h.db
      .selectFrom(t as "commands")
      .selectAll()
      .execute();
    out[t] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

async function membersOfList(): Promise<unknown> {
  const res = await f.request(adminA, `/access-control/v1/mgmt/access-lists/${LIST}/users`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

beforeAll(async () => {
  h = await startCloudHarness();
  f = riderFlow(h);
  adminA = client(h, CLIENTS.admin, OP_A);
  adminB = client(h, CLIENTS.other, OP_B);
  r1 = await rider(h, OP_A, "tenancy-r1");
  r2 = await rider(h, OP_A, "tenancy-r2");
  rb = await rider(h, OP_B, "tenancy-rb");

  // An access list of A at a location of its own (so R1's lock at L1 is not restricted by it).
  await applyManifest(
    h.db,
    SiteManifest.parse({
      version: 1,
      operators: [
        {
          id: OP_A,
          name: "Operator A",
          locations: [
            {
              code: "T1",
              label: "Tenancy lockers",
              type: "BIKE_LOCKERS",
              latitude: 52.3,
              longitude: 4.7,
              access_lists: [{ id: LIST, kind: "closed", name: "Residents" }],
            },
          ],
          whitelists: [
            {
              id: WHITELIST,
              name: "Residents' cards",
              targets: [{ location: "T1" }],
              entities: [{ id: "0a0b" }],
            },
          ],
        },
      ],
    }),
    h.clock,
  );
  const added = await f.request(adminA, `/access-control/v1/mgmt/access-lists/${LIST}/users`, "POST", {
    user_id: r1.id,
    comment: "resident",
  });
  expect(added.statusCode, added.body).toBe(204);

  // R1's session through the real command path: lock → gateway SUCCESS, two hours parked, unlock → SUCCESS.
  const lock = await f.lock(r1, PRICED);
  h.clock.advance(2 * HOUR);
  await f.unlock(r1, PRICED);
  const listed = await f.request(r1, "/session/v2/sessions");
  expect(listed.statusCode, listed.body).toBe(200);
  const [session] = SessionV2List.parse(listed.json()).data;
  expect(session?.status).toBe("ended");
  expect(session?.payment?.status).toBe("PENDING");
  expect(session?.fee).not.toBeNull();
  // The price list the device refers to (and the session was priced with).
  const device = await f.request(adminA, `/device/v1/devices/${PRICED}`);
  const priceList = device.json().price_list?.id as string;
  expect(priceList).toBe(fx.priceList("standard"));

  // A photo of the GUARD, as gw-a1 sends it: its one part, then the command's SUCCESS.
  const photo = await f.photo(adminA, GUARD, PHOTO);
  photoCommand = photo.id;

  ids = {
    user_id: [r1.id, r2.id, rb.id],
    session_id: [session?.id as string],
    payment_id: [session?.payment?.id as string],
    device_id: [PRICED],
    price_list_id: [priceList],
    access_list_id: [LIST],
    whitelist_id: [WHITELIST],
    command_id: [lock.id],
  };
  expect(await membersOfList()).toMatchObject({
    data: [{ user_id: r1.id, status: "included:active", comment: "resident" }],
  });
});
afterAll(() => h?.close());

describe("the walk", () => {
  it("selects every {id} route of issue 8 from the OpenAPI document", () => {
    expect(ROUTES.map(label).sort()).toEqual(
      expect.arrayContaining([
        "GET /session/v2/users/{user_id}/sessions/{session_id}",
        "GET /session/v1/device-sessions/{session_id}",
        "GET /session/v1/devices/{device_id}/sessions",
        "GET /session/v1/payments/{payment_id}",
        "GET /location/v1/price-lists/{price_list_id}",
        "GET /access-control/v1/mgmt/access-lists/{access_list_id}/users",
        "POST /access-control/v1/mgmt/access-lists/{access_list_id}/users",
        "POST /access-control/v1/mgmt/access-lists/{access_list_id}/remove-user",
        "GET /whitelist/v1/whitelists/{whitelist_id}",
        "GET /whitelist/v1/whitelists/{whitelist_id}/entities",
        "POST /whitelist/v1/whitelists/{whitelist_id}/entities",
        "GET /whitelist/v1/whitelists/{whitelist_id}/targets",
        "POST /whitelist/v1/whitelists/{whitelist_id}/targets",
        "GET /device/v1/commands/{command_id}",
        "GET /device/v1/commands/{command_id}/photo",
      ]),
    );
    // Every selected route can be filled and called (no route is skipped for want of an id or a body).
    for (const route of ROUTES) {
      expect(fills(route.path, idsOf(route)).length, label(route)).toBeGreaterThan(0);
      bodyOf(route);
    }
  });
});

type Stranger = { name: string; who: () => Caller; operator: string; rider: boolean };
const STRANGERS: Stranger[] = [
  { name: "operator B's client", who: () => adminB, operator: OP_B, rider: false },
  { name: "a rider of operator B", who: () => rb, operator: OP_B, rider: true },
  { name: "another rider of operator A (R2)", who: () => r2, operator: OP_A, rider: true },
];

/** What a stranger must get: 404 not found, or 403 for any rider on operator-only routes. */
function refusal(route: Route, s: Stranger): { status: number; code: string } | "reads" {
  const family = familyOf(route.path);
  if (family === "operator-only" && s.rider) return { status: 403, code: "ERRORS.FORBIDDEN" };
  // A price list is the operator's, not R1's: its riders read it (it shows what parking costs).
  if (family === "operator-read" && s.operator === OP_A) return "reads";
  return { status: 404, code: "ERRORS.NOT_FOUND" };
}

/** The same fill with the walked objects swapped for ones the stranger cannot tell apart from them. */
function control(fill: Record<string, string>, unknown: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(fill)) {
    // The user in a v2 path stays: the question is the session. A device is no secret to the operator's
    // riders (they read its devices): the secret is R1's session on it, so the control is an idle device.
    out[name] = name === "user_id" ? value : name === "device_id" ? IDLE : (unknown[name] ?? randomUUID());
  }
  return out;
}

describe.each(ROUTES.map((r) => [label(r), r] as const))("%s, called by a stranger", (_label, route) => {
  it.each(STRANGERS.map((s) => [s.name, s] as const))(
    "answers %s as decided (404 not found; 403 to any rider on an operator function), the same as for unknown ids, and changes nothing",
    async (_name, s) => {
      const who = s.who();
      const expected = refusal(route, s);
      const before = await snapshot();
      const membersBefore = await membersOfList();
      const unknownIds = Object.fromEntries(Object.keys(ids).map((k) => [k, randomUUID()]));
      for (const fill of fills(route.path, idsOf(route))) {
        const url = urlOf(route.path, fill);
        const res = await call(who, route, fill);
        if (expected === "reads") {
          expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
          continue;
        }
        // The standard error body, with a correlation id.
        expect(res.statusCode, `${url}: ${res.body}`).toBe(expected.status);
        expect(res.json(), url).toEqual({
          status_code: expected.status,
          error_code: expected.code,
          error_message: expect.any(String),
          correlation_id: expect.any(String),
        });
        expect(res.headers["x-correlation-id"]).toBe(res.json().correlation_id);
        // The same answer as for objects that do not exist (or that the stranger may not see either).
        const other = control(fill, unknownIds);
        const answer = await call(who, route, other);
        expect(shape(res, fill), `${url} vs ${urlOf(route.path, other)}`).toEqual(shape(answer, other));
        // And every id unknown: still the same status and code.
        const nothing = Object.fromEntries(Object.keys(fill).map((k) => [k, randomUUID()]));
        const none = await call(who, route, nothing);
        expect(none.statusCode, urlOf(route.path, nothing)).toBe(expected.status);
        expect(none.json().error_code).toBe(expected.code);
      }
      // Nothing changed: the members of the list, and every row of the tables these routes touch.
      expect(await membersOfList()).toEqual(membersBefore);
      expect(await snapshot()).toEqual(before);
    },
  );
});

/** The owners see each object (so the walk above cannot pass for want of objects or a working route). */
describe.each(ROUTES.map((r) => [label(r), r] as const))("%s, called by the owner", (_label, route) => {
  it("answers the owner 200/204: operator A's client, and R1 on rider routes (403 on operator functions)", async () => {
    const [fill] = fills(route.path, idsOf(route)) as [Record<string, string>];
    const url = urlOf(route.path, fill);
    const ok = route.method === "GET" ? 200 : 204;
    const byAdmin = await call(adminA, route, fill);
    expect(byAdmin.statusCode, `${url}: ${byAdmin.body}`).toBe(ok);
    const byR1 = await call(r1, route, fill);
    if (familyOf(route.path) === "operator-only") {
      expect(byR1.statusCode, `${url}: ${byR1.body}`).toBe(403);
      expect(byR1.json().error_code).toBe("ERRORS.FORBIDDEN");
    } else {
      expect(byR1.statusCode, `${url}: ${byR1.body}`).toBe(200);
    }
    if (route.path.endsWith("/photo")) {
      // The answer is the photo itself.
      expect(byAdmin.headers["content-type"], url).toBe("image/jpeg");
      expect(byAdmin.rawPayload.equals(PHOTO), url).toBe(true);
    } else if (route.method === "GET") {
      const body = JSON.stringify(byAdmin.json());
      // The answer is about the walked object (its id is in it, or it is the list's members).
      const named = Object.entries(fill).filter(([k]) => k !== "user_id" && k !== "device_id");
      for (const [, value] of named) expect(body, url).toContain(value);
      // The device's current session is R1's.
      if ("device_id" in fill) expect(body, url).toContain(ids.session_id?.[0]);
    }
  });
});
