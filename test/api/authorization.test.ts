import { readFileSync } from "node:fs";
import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAudit } from "../../cloud/audit/audit-log.ts";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { sessionRepository } from "../../cloud/sessions/session-repository.ts";
import { SessionV2List } from "../../shared/api/session.ts";
import type { DeviceState } from "../../shared/domain/device-machine.ts";
import { type CloudHarness, fixtureSecretHash, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A, OP_B, SECRET } from "../support/fixture-site.ts";
import { type Caller, client, type RiderFlow, rider, riderFlow } from "../support/rider-sessions.ts";
import {
  CALLERS,
  type CallerKey,
  type CommandCase,
  expectedStatus,
  permissionsOf,
  ROWS,
  type Row,
  SECURITY_DOC,
  withMatrix,
} from "./authorization-matrix.ts";

/**
 * Every cell of the authorization matrix (docs/security.md) against the real app, on the store of this run:
 * each route, in each situation the matrix names, with each kind of caller. A refused command changes
 * nothing (no state, no session, nothing sent to the gateway). A served route without a row fails.
 */

/** A closed access list at the bike house MH, and a whitelist targeting it (fixed ids, as a manifest declares). */
const LIST = "a9a9a9a9-0000-4000-8000-0000000000a1";
const WHITELIST = "a9a9a9a9-0000-4000-8000-0000000000b1";
const LOCKER = fx.device("MX", "1");
const HOUSE_DOOR = fx.device("MH", "door");
const HOUSE_LOCKER = fx.device("MH", "1");
const GUARD = fx.guard("gw-a1");
/** The priced locker rider A's session was on. */
const PRICED = fx.device("L1", "2");
const UNKNOWN_USER = "0f0f0f0f-0000-4000-8000-00000000dead";
const HOUR = 3_600_000;
const PHOTO = Buffer.from([0xff, 0xd8, 0xff, 0xfe, 0x00, 0x03, 0x00, 0xff, 0xd9]);

let h: CloudHarness;
let f: RiderFlow;
let riders: { a: Caller; b: Caller; off: Caller; gone: Caller };
/** Ids the rows' paths and bodies are filled with. */
let fill: Record<string, string>;

function callerOf(key: CallerKey): Caller | null {
  if (key === "anonymous") return null;
  if (key === "riderA") return riders.a;
  if (key === "riderB") return riders.b;
  if (key === "riderOff") return riders.off;
  if (key === "otherOperator") return client(h, CLIENTS.other, OP_B);
  return client(h, "a-matrix", OP_A, permissionsOf(key) ?? []);
}

/** The path's route registered as `:param`, in the matrix's `{param}` form; HEAD is GET without the body. */
function servedRoutes(): string[] {
  const tree = h.app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split("\n")) {
    const m = /^([│ ├└─]*)(\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = Math.round((m[1] as string).length / 4);
    stack.length = depth;
    const segment = m[2] as string;
    // A wildcard is printed as its own segment; any other segment without a slash continues its parent's
    // name (`/console/api/session` then `s`).
    stack.push(segment.startsWith("*") && !stack.join("").endsWith("/") ? `/${segment}` : segment);
    const path = stack.join("").replace(/:([A-Za-z_]+)/g, "{$1}");
    for (const method of (m[3] ?? "").split(", ").filter((x) => x && x !== "HEAD"))
      routes.push(`${method} ${path}`);
  }
  return [...new Set(routes)].sort();
}

const fillText = (text: string) =>
  text.replace(/\{([A-Za-z_*]+)\}/g, (all, name: string) => fill[name] ?? all);

function requestOf(row: Row, who: Caller | null, token: string | null): InjectOptions {
  const [method, path] = row.route.split(" ") as [InjectOptions["method"], string];
  const params: Record<string, string> = {
    ...fill,
    ...(row.command ? { device_id: deviceOf(row.command) } : {}),
    ...row.params,
  };
  const paramValue = (name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${row.route}: no fixture value for {${name}}`);
    return value;
  };
  const url = path
    .replace(/\{([^}]+)\}/g, (_, name: string) => paramValue(name))
    .replace(/\*$/, () => paramValue("*"));
  const headers: Record<string, string> = who && token ? { authorization: `Bearer ${token}` } : {};
  const opts: InjectOptions = { method, url: row.query ? `${url}?${row.query}` : url, headers };
  if (row.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    opts.payload = new URLSearchParams(
      Object.fromEntries(Object.entries(row.form).map(([k, v]) => [k, fillText(v)])),
    ).toString();
  } else if (row.command) {
    opts.payload = JSON.parse(fillText(JSON.stringify(row.command.body)));
  } else if (row.body !== undefined) {
    opts.payload = JSON.parse(fillText(JSON.stringify(row.body)));
  }
  return opts;
}

function deviceOf(c: CommandCase): string {
  return { locker: LOCKER, houseDoor: HOUSE_DOOR, houseLocker: HOUSE_LOCKER, guard: GUARD }[c.device];
}

/** Puts the row's device in its holding: free, locked or booked by whom, no command in flight, no throttle. */
async function setHolding(c: CommandCase): Promise<void> {
  if (c.device === "guard") return;
  const devices = deviceRepository(h.db);
  const device = await devices.find(deviceOf(c));
  if (!device) throw new Error(`no device for ${c.device}`);
  const now = h.clock.now();
  const at = (value: DeviceState["value"], timeout_at: string | null = null): DeviceState => ({
    value,
    changed_at: now.toISOString(),
    timeout_at,
    restore: null,
  });
  const door = c.device === "houseDoor";
  const locked = c.holding.startsWith("locked") || door;
  const booked = c.holding.startsWith("booked");
  const occupant = {
    "locked by rider A": riders.a.id,
    "locked by the rider off the list": riders.off.id,
  }[c.holding as string];
  const written = await devices.compareAndSet(
    device,
    {
      state: locked
        ? at("LOCKED")
        : booked
          ? at("BOOKED", new Date(now.getTime() + HOUR).toISOString())
          : at("UNLOCKED"),
      lock_state: locked ? "LOCKED" : "UNLOCKED",
      user_id: occupant ?? null,
      user_access_key: null,
      booked_by:
        c.holding === "booked by rider A"
          ? riders.a.id
          : c.holding === "booked by rider B"
            ? riders.b.id
            : null,
      command_id: null,
      last_lock_command_at: null,
    },
    now,
  );
  if (!written) throw new Error(`could not set ${c.device} to ${c.holding}`);
}

/** What a refused command must leave as it was: the device, its sessions, what went to gateways. */
async function traceOf(c: CommandCase) {
  const deviceId = deviceOf(c);
  const device = await deviceRepository(h.db).find(deviceId);
  const sessions = await sessionRepository(h.db).onDevice(deviceId, ["pending", "booked", "active", "ended"]);
  const audited = (await listAudit(h.db, OP_A, { subject: { type: "device", id: deviceId } })).data;
  return { device, sessions, sent: h.gateways.commands.length, audited };
}

beforeAll(async () => {
  h = await startCloudHarness();
  f = riderFlow(h);
  const secret = { secret_hash: await fixtureSecretHash() };
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
              code: "MX",
              label: "Matrix lockers",
              type: "BIKE_LOCKERS",
              latitude: 52.1,
              longitude: 4.1,
              // No cap on sessions: each cell starts from the holding it names, whatever earlier cells left.
              attrs: { max_user_sessions: 0 },
              gateways: [{ id: "gw-mx", ...secret, devices: [{ alias: "1", type: "LOCKER" }] }],
            },
            {
              code: "MH",
              label: "Matrix house",
              type: "BIKE_HOUSE",
              latitude: 52.2,
              longitude: 4.2,
              attrs: { max_user_sessions: 0 },
              access_lists: [{ id: LIST, kind: "closed", name: "Residents" }],
              gateways: [
                {
                  id: "gw-mh",
                  ...secret,
                  devices: [
                    { alias: "door", type: "BIKE_HOUSE_DOOR" },
                    { alias: "1", type: "LOCKER" },
                  ],
                },
              ],
            },
          ],
          whitelists: [
            {
              id: WHITELIST,
              name: "Residents' cards",
              targets: [{ location: "MH" }],
              entities: [{ id: "0a0b" }],
            },
          ],
        },
      ],
    }),
    h.clock,
  );
  riders = {
    a: await rider(h, OP_A, "matrix-a"),
    b: await rider(h, OP_A, "matrix-b"),
    off: await rider(h, OP_A, "matrix-off"),
    gone: await rider(h, OP_A, "matrix-gone"),
  };
  const admin = client(h, CLIENTS.admin, OP_A);
  for (const r of [riders.a, riders.b, riders.gone]) {
    const added = await f.request(admin, `/access-control/v1/mgmt/access-lists/${LIST}/users`, "POST", {
      user_id: r.id,
    });
    expect(added.statusCode, added.body).toBe(204);
  }
  const removed = await f.request(admin, `/access-control/v1/mgmt/access-lists/${LIST}/remove-user`, "POST", {
    user_id: riders.gone.id,
  });
  expect(removed.statusCode, removed.body).toBe(204);

  // Rider A's session on a priced locker, through the real command path: its command, session and payment.
  const lock = await f.lock(riders.a, PRICED);
  h.clock.advance(2 * HOUR);
  await f.unlock(riders.a, PRICED);
  const listed = await f.request(riders.a, "/session/v2/sessions");
  const [session] = SessionV2List.parse(listed.json()).data;
  if (!session?.payment) throw new Error("rider A's session has no payment");

  // A photo of the camera GUARD, as its gateway sends it.
  const photo = await f.photo(admin, GUARD, PHOTO);

  fill = {
    id: fx.location("L1"),
    location_id: fx.location("L1"),
    device_id: PRICED,
    command_id: lock.id,
    public_area_id: "city-a",
    price_list_id: fx.priceList("standard"),
    whitelist_id: WHITELIST,
    access_list_id: LIST,
    user_id: riders.a.id,
    session_id: session.id,
    payment_id: session.payment.id,
    operatorA: OP_A,
    riderA: riders.a.id,
    riderGone: riders.gone.id,
    unknownUser: UNKNOWN_USER,
    houseLocation: fx.location("MH"),
    houseLocationUri: `/location/v1/locations/${fx.location("MH")}`,
    secret: SECRET,
    photoCommand: photo.id,
  };
});
afterAll(() => h?.close());

describe("the authorization matrix", () => {
  it("has a row for every route the cloud serves, and no row for a route it does not", () => {
    const served = servedRoutes();
    expect(served.length).toBeGreaterThan(40);
    expect([...new Set(ROWS.map((r) => r.route))].sort()).toEqual(served);
  });

  it("is rendered in docs/security.md as it is here", () => {
    const doc = readFileSync(SECURITY_DOC, "utf8");
    expect(doc, "docs/security.md is stale: run `npx tsx test/api/authorization-matrix.ts`").toBe(
      withMatrix(doc),
    );
  });

  for (const row of ROWS) {
    it(`${row.route}: ${row.case}`, async () => {
      const misses: string[] = [];
      for (const key of CALLERS) {
        const who = callerOf(key);
        const token = who ? await who.token() : null;
        if (row.command) await setHolding(row.command);
        const before = row.command ? await traceOf(row.command) : null;
        const opts = requestOf(
          row.route.endsWith("/photo")
            ? { ...row, params: { command_id: fill.photoCommand as string } }
            : row,
          who,
          token,
        );
        const res = await h.app.inject(opts);
        const want = expectedStatus(row, key);
        if (res.statusCode !== want)
          misses.push(`${key}: ${res.statusCode} (want ${want}) ${res.body.slice(0, 160)}`);
        if (row.command && before && res.statusCode !== 200) {
          const after = await traceOf(row.command);
          if (JSON.stringify(after) !== JSON.stringify(before))
            misses.push(`${key}: the refusal changed something`);
        }
      }
      expect(misses).toEqual([]);
    });
  }
});
