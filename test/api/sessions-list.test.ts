import { randomUUID } from "node:crypto";
import fc from "fast-check";
import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Device } from "../../shared/api/device.ts";
import { Payment, PriceList, SessionV1, SessionV1List, SessionV2List } from "../../shared/api/session.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A, OP_B } from "../support/fixture-site.ts";
import {
  type Caller,
  client,
  type RiderFlow,
  rider,
  riderFlow,
  seedSession,
} from "../support/rider-sessions.ts";

const L1 = fx.location("L1");
const D1 = fx.location("D1");
const LOCKER = fx.device("L1", "2");
const DOCK = fx.device("D1", "1");
const NOBODY = "00000000-0000-4000-8000-000000000000";
const DAY = 24 * 60 * 60 * 1000;

let h: CloudHarness;
let f: RiderFlow;
let alice: Caller;
let bob: Caller;
let carol: Caller;
let admin: Caller;
let otherOperator: Caller;

beforeAll(async () => {
  h = await startCloudHarness();
  f = riderFlow(h);
  alice = await rider(h, OP_A, "alice");
  bob = await rider(h, OP_A, "bob");
  carol = await rider(h, OP_B, "carol");
  admin = client(h, CLIENTS.admin, OP_A);
  otherOperator = client(h, CLIENTS.other, OP_B);
});
afterAll(() => h.close());

function expectError(res: LightMyRequestResponse, status: number, code: string, message?: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(["correlation_id", "error_code", "error_message", "status_code"]);
  expect(body).toMatchObject({ status_code: status, error_code: code });
  if (message) expect(body.error_message).toMatch(message);
}

async function list(who: Caller, query: string) {
  const res = await f.request(who, `/session/v2/sessions?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return SessionV2List.parse(res.json());
}

describe("sessions v2 list: filters", () => {
  // One user of their own per describe, so the suite's other sessions never mix in.
  const user = randomUUID();
  const ids: Record<string, string> = {};
  const day = (d: number, hour = 12) =>
    new Date(Date.parse("2026-03-01T00:00:00.000Z") + d * DAY + hour * 3_600_000).toISOString();
  beforeAll(async () => {
    const base = { operatorId: OP_A, userId: user, deviceId: LOCKER, locationId: L1 };
    // Started on day 0, ended on day 3: an ended session filtered by its end time.
    ids.endedDay3 = await seedSession(h.db, { ...base, createdAt: day(0, 1), start: day(0, 2), end: day(3) });
    ids.activeDay1 = await seedSession(h.db, { ...base, createdAt: day(1, 1), start: day(1) });
    ids.bookedDay2 = await seedSession(h.db, { ...base, createdAt: day(2, 1), book: day(2) });
    ids.activeDay4Dock = await seedSession(h.db, {
      ...base,
      deviceId: DOCK,
      locationId: D1,
      createdAt: day(4, 1),
      book: day(4, 2),
      start: day(4, 3),
    });
    ids.pendingDay5 = await seedSession(h.db, { ...base, createdAt: day(5) });
  });
  const q = (extra: string) => `user_id=${user}&limit=100${extra}`;
  const idsOf = async (extra: string) => (await list(admin, q(extra))).data.map((s) => s.id);

  it("lists newest first, pending sessions included", async () => {
    expect(await idsOf("")).toEqual([
      ids.pendingDay5,
      ids.activeDay4Dock,
      ids.bookedDay2,
      ids.activeDay1,
      ids.endedDay3,
    ]);
  });

  it("status=active / ended / booked", async () => {
    expect(await idsOf("&status=active")).toEqual([ids.activeDay4Dock, ids.activeDay1]);
    expect(await idsOf("&status=ended")).toEqual([ids.endedDay3]);
    expect(await idsOf("&status=booked")).toEqual([ids.bookedDay2]);
  });

  it("from/to are UTC days, inclusive: active sessions by start time, ended ones by end time", async () => {
    expect(await idsOf("&status=active&from=2026-03-02&to=2026-03-02")).toEqual([ids.activeDay1]);
    expect(await idsOf("&status=active&from=2026-03-03")).toEqual([ids.activeDay4Dock]);
    expect(await idsOf("&status=ended&from=2026-03-04&to=2026-03-04")).toEqual([ids.endedDay3]);
    // The ended session started on day 0, but it is filtered by its end on day 3.
    expect(await idsOf("&status=ended&to=2026-03-03")).toEqual([]);
    expect(await idsOf("&from=2026-03-03&to=2026-03-05")).toEqual([
      ids.activeDay4Dock,
      ids.bookedDay2,
      ids.endedDay3,
    ]);
  });

  it("location_id", async () => {
    expect(await idsOf(`&location_id=${D1}`)).toEqual([ids.activeDay4Dock]);
    expect(await idsOf(`&location_id=${NOBODY}`)).toEqual([]);
  });

  it("an external user sees only their own sessions: user_id of another user gives an empty list", async () => {
    await seedSession(h.db, {
      operatorId: OP_A,
      userId: alice.id,
      deviceId: LOCKER,
      locationId: L1,
      createdAt: day(6),
    });
    const own = await list(alice, "limit=100");
    expect(own.data.length).toBeGreaterThan(0);
    expect(own.data.every((s) => s.user_id === alice.id)).toBe(true);
    expect((await list(alice, `user_id=${alice.id}`)).data.length).toBe(own.data.length);
    expect((await list(alice, `user_id=${user}`)).data).toEqual([]);
    expect((await list(bob, "limit=100")).data.some((s) => s.user_id === alice.id)).toBe(false);
    expect(
      (await list(otherOperator, "limit=100")).data.some((s) => s.user_id === alice.id || s.user_id === user),
    ).toBe(false);
  });
});

describe("sessions v2 list: validation", () => {
  it.each([
    ["limit=0", /limit/],
    ["limit=101", /limit/],
    ["limit=abc", /limit/],
    ["limit=1.5", /limit/],
    ["status=pending", /status/],
    ["status=ACTIVE", /status/],
    ["from=2026-3-1", /from/],
    ["to=2026-02-30", /to: must be a real calendar date/],
    ["from=2026-03-02&to=2026-03-01", /from must not be after to/],
    ["location_id=L1", /location_id/],
    ["user_id=alice", /user_id/],
    ["page=2", /page/],
  ])("%s → 400 naming the parameter", async (query, message) => {
    expectError(
      await f.request(admin, `/session/v2/sessions?${query}`),
      400,
      "ERRORS.VALIDATION_FAILED",
      message,
    );
  });

  it("a pagination_token that is not one, or was given for other filters, is 400 INVALID_PAGINATION_TOKEN", async () => {
    const user = randomUUID();
    for (let i = 0; i < 3; i++)
      await seedSession(h.db, {
        operatorId: OP_A,
        userId: user,
        deviceId: LOCKER,
        locationId: L1,
        createdAt: new Date(Date.UTC(2026, 0, 1, i)).toISOString(),
      });
    const page = await list(admin, `user_id=${user}&limit=2`);
    expect(page.data).toHaveLength(2);
    const token = page.pagination_token as string;
    expect(token).toEqual(expect.any(String));
    expect((await list(admin, `user_id=${user}&limit=2&pagination_token=${token}`)).data).toHaveLength(1);
    for (const bad of ["garbage", Buffer.from('{"v":1}').toString("base64url")])
      expectError(
        await f.request(admin, `/session/v2/sessions?user_id=${user}&pagination_token=${bad}`),
        400,
        "ERRORS.INVALID_PAGINATION_TOKEN",
        /pagination_token/,
      );
    expectError(
      await f.request(admin, `/session/v2/sessions?user_id=${user}&status=ended&pagination_token=${token}`),
      400,
      "ERRORS.INVALID_PAGINATION_TOKEN",
      /other filters/,
    );
    // Another caller cannot continue someone else's listing either.
    expectError(
      await f.request(
        client(h, CLIENTS.basic, OP_A),
        `/session/v2/sessions?user_id=${user}&pagination_token=${token}`,
      ),
      400,
      "ERRORS.INVALID_PAGINATION_TOKEN",
    );
  });

  it("answers 401 without a token", async () => {
    expectError(await f.request(null, "/session/v2/sessions"), 401, "ERRORS.UNAUTHORIZED");
  });
});

describe("sessions v2 list: pagination while sessions are inserted", () => {
  it("never shows a session twice and never skips one that existed when paging began", async () => {
    const devices = [
      { deviceId: LOCKER, locationId: L1 },
      { deviceId: DOCK, locationId: D1 },
    ];
    const T0 = Date.parse("2026-02-01T00:00:00.000Z");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(50), { minLength: 0, maxLength: 25 }),
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.record({ minute: fc.nat(60), count: fc.nat(3) }), { maxLength: 12 }),
        async (minutes, limit, inserts) => {
          const user = randomUUID();
          const seed = (minute: number, i: number) =>
            seedSession(h.db, {
              operatorId: OP_A,
              userId: user,
              ...(devices[i % 2] as (typeof devices)[number]),
              // Few distinct minutes: many sessions share a creation time, so ties are broken by id.
              createdAt: new Date(T0 + minute * 60_000).toISOString(),
            });
          const existing = new Set<string>();
          for (const [i, m] of minutes.entries()) existing.add(await seed(m, i));
          const seen: string[] = [];
          let token: string | null = null;
          let page = 0;
          do {
            const res = await list(
              admin,
              `user_id=${user}&limit=${limit}${token ? `&pagination_token=${encodeURIComponent(token)}` : ""}`,
            );
            seen.push(...res.data.map((s) => s.id));
            token = res.pagination_token;
            // Between pages, sessions are created: before, among and after what was already read.
            const insert = inserts[page++];
            if (insert) for (let i = 0; i < insert.count; i++) await seed(insert.minute, i);
          } while (token);
          expect(new Set(seen).size).toBe(seen.length);
          for (const id of existing) expect(seen).toContain(id);
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe("sessions v1 (deprecated)", () => {
  const user = randomUUID();
  let ended: string;
  let active: string;
  let dora: Caller;
  beforeAll(async () => {
    dora = await rider(h, OP_A, "dora");
    const base = { operatorId: OP_A, userId: dora.id, deviceId: LOCKER, locationId: L1 };
    ended = await seedSession(h.db, {
      ...base,
      createdAt: "2026-04-01T08:00:00.000Z",
      start: "2026-04-01T08:00:00.000Z",
      end: "2026-04-02T09:00:00.000Z",
    });
    active = await seedSession(h.db, {
      ...base,
      createdAt: "2026-04-03T08:00:00.000Z",
      start: "2026-04-03T08:00:00.000Z",
    });
    await seedSession(h.db, { ...base, userId: user, createdAt: "2026-04-03T09:00:00.000Z" });
  });

  function expectDeprecated(res: LightMyRequestResponse, successor: string) {
    expect(res.headers.deprecation).toBe("@1767225600");
    expect(res.headers.sunset).toBe("Thu, 31 Dec 2026 23:59:59 GMT");
    expect(res.headers.link).toBe(`<${successor}>; rel="successor-version"`);
  }

  it("lists ended sessions by default and active ones with active=true, in the v1 record's fields", async () => {
    const res = await f.request(dora, "/session/v1/device-sessions");
    expect(res.statusCode, res.body).toBe(200);
    expectDeprecated(res, "/session/v2/sessions");
    const endedList = SessionV1List.parse(res.json()).data;
    expect(endedList.map((s) => s.uri)).toEqual([`/session/v1/device-sessions/${ended}`]);
    const record = endedList[0] as SessionV1;
    expect(Object.keys(record).sort()).toEqual(
      [
        "access_key_id",
        "user_id",
        "start_time",
        "end_time",
        "fee",
        "rating",
        "location",
        "device",
        "payment",
        "events",
        "uri",
      ].sort(),
    );
    expect(record).toMatchObject({
      user_id: dora.id,
      start_time: "2026-04-01T08:00:00.000Z",
      end_time: "2026-04-02T09:00:00.000Z",
      location: { id: L1, uri: `/location/v1/locations/${L1}` },
      device: { id: LOCKER, uri: `/device/v1/devices/${LOCKER}` },
      payment: { uri: `/session/v1/payments/${record.payment?.id}`, status: "NOT_CHARGED" },
      events: [
        { name: "start", timestamp: "2026-04-01T08:00:00.000Z" },
        { name: "end", timestamp: "2026-04-02T09:00:00.000Z" },
      ],
    });
    const activeList = SessionV1List.parse(
      (await f.request(dora, "/session/v1/device-sessions?active=true")).json(),
    );
    expect(activeList.data.map((s) => s.uri)).toEqual([`/session/v1/device-sessions/${active}`]);
  });

  it("from/to: ended sessions by end time, active ones by start time; page and page_size", async () => {
    const uris = async (query: string) =>
      SessionV1List.parse((await f.request(dora, `/session/v1/device-sessions?${query}`)).json()).data.map(
        (s) => s.uri,
      );
    expect(await uris("from=2026-04-02&to=2026-04-02")).toEqual([`/session/v1/device-sessions/${ended}`]);
    expect(await uris("from=2026-04-01&to=2026-04-01")).toEqual([]);
    expect(await uris("active=true&from=2026-04-03")).toEqual([`/session/v1/device-sessions/${active}`]);
    expect(await uris("active=true&to=2026-04-02")).toEqual([]);
    const all = await uris(`location_id=${L1}&active=false&page_size=100`);
    expect(all).toHaveLength(1);
    expect(await uris("page=2&page_size=1")).toEqual([]);
    expect(await uris("page=1&page_size=1")).toHaveLength(1);
    for (const bad of ["page=0", "page_size=101", "active=yes", "limit=5"])
      expectError(
        await f.request(dora, `/session/v1/device-sessions?${bad}`),
        400,
        "ERRORS.VALIDATION_FAILED",
      );
  });

  it("the detail points at its v2 successor; the device's sessions answer its current one", async () => {
    const res = await f.request(dora, `/session/v1/device-sessions/${ended}`);
    expect(res.statusCode, res.body).toBe(200);
    expectDeprecated(res, `/session/v2/users/${dora.id}/sessions/${ended}`);
    expect(SessionV1.parse(res.json()).end_time).toBe("2026-04-02T09:00:00.000Z");
    const current = await f.request(dora, `/session/v1/devices/${LOCKER}/sessions`);
    expect(current.statusCode, current.body).toBe(200);
    expectDeprecated(current, "/session/v2/sessions");
    expect(SessionV1.parse(current.json()).uri).toBe(`/session/v1/device-sessions/${active}`);
    const none = await f.request(dora, `/session/v1/devices/${DOCK}/sessions`);
    expectError(none, 404, "ERRORS.NOT_FOUND");
    expectDeprecated(none, "/session/v2/sessions");
  });
});

describe("price lists and payments", () => {
  it("a device's price_list uri resolves to the price list, read-only", async () => {
    const device = Device.parse((await f.request(admin, `/device/v1/devices/${LOCKER}`)).json());
    expect(device.price_list).toEqual({
      id: fx.priceList("standard"),
      uri: `/location/v1/price-lists/${fx.priceList("standard")}`,
    });
    const uri = device.price_list?.uri as string;
    for (const who of [admin, alice]) {
      const res = await f.request(who, uri);
      expect(res.statusCode, res.body).toBe(200);
      expect(PriceList.parse(res.json())).toEqual({
        id: fx.priceList("standard"),
        uri,
        name: "Standard",
        currency: "EUR",
        free_minutes: 0,
        period_minutes: 60,
        price_per_period: "2.00",
        max_fee: "10.00",
      });
    }
    expect((await f.request(admin, uri, "POST", {})).statusCode).toBe(405);
    const unpriced = Device.parse(
      (await f.request(admin, `/device/v1/devices/${fx.device("L1", "1")}`)).json(),
    );
    expect(unpriced.price_list).toBeNull();
  });

  it("a session's payment uri resolves to the payment", async () => {
    const id = await seedSession(h.db, {
      operatorId: OP_A,
      userId: alice.id,
      deviceId: LOCKER,
      locationId: L1,
      createdAt: "2026-05-01T08:00:00.000Z",
      start: "2026-05-01T08:00:00.000Z",
      end: "2026-05-01T09:00:00.000Z",
    });
    const v1 = SessionV1.parse((await f.request(alice, `/session/v1/device-sessions/${id}`)).json());
    const res = await f.request(alice, v1.payment?.uri as string);
    expect(res.statusCode, res.body).toBe(200);
    expect(Payment.parse(res.json())).toEqual({
      id: v1.payment?.id,
      uri: v1.payment?.uri,
      status: "NOT_CHARGED",
      fee: null,
      session: { id, uri: `/session/v2/users/${alice.id}/sessions/${id}` },
    });
  });
});

describe("tenancy: another operator's token and another rider's token find nothing", () => {
  let session: string;
  let payment: string;
  beforeAll(async () => {
    session = await seedSession(h.db, {
      operatorId: OP_A,
      userId: alice.id,
      deviceId: LOCKER,
      locationId: L1,
      createdAt: "2026-06-01T08:00:00.000Z",
      start: "2026-06-01T08:00:00.000Z",
      end: "2026-06-01T10:00:00.000Z",
    });
    const v1 = SessionV1.parse((await f.request(alice, `/session/v1/device-sessions/${session}`)).json());
    payment = v1.payment?.id as string;
    // The device's current session is alice's; bob has none there.
    await seedSession(h.db, {
      operatorId: OP_A,
      userId: alice.id,
      deviceId: fx.device("L1", "3"),
      locationId: L1,
      createdAt: "2026-06-01T08:00:00.000Z",
      start: "2026-06-01T08:00:00.000Z",
    });
  });

  const routes = () => [
    {
      url: `/session/v2/users/${alice.id}/sessions/${session}`,
      none: `/session/v2/users/${alice.id}/sessions/${NOBODY}`,
    },
    {
      url: `/session/v2/users/${bob.id}/sessions/${session}`,
      none: `/session/v2/users/${bob.id}/sessions/${NOBODY}`,
    },
    { url: `/session/v1/device-sessions/${session}`, none: `/session/v1/device-sessions/${NOBODY}` },
    {
      url: `/session/v1/devices/${fx.device("L1", "3")}/sessions`,
      none: `/session/v1/devices/${NOBODY}/sessions`,
    },
    { url: `/session/v1/payments/${payment}`, none: `/session/v1/payments/${NOBODY}` },
  ];

  it("the owner and the operator's client see each of them", async () => {
    for (const { url } of routes().filter((r) => !r.url.includes(bob.id))) {
      expect((await f.request(alice, url)).statusCode, url).toBe(200);
      expect((await f.request(admin, url)).statusCode, url).toBe(200);
    }
  });

  it.each([
    ["another operator's client", () => otherOperator],
    ["another rider of the same operator", () => bob],
    ["a rider of another operator", () => carol],
  ])("%s: 404 on every {id} route, the same as for an id that does not exist", async (_who, who) => {
    for (const { url, none } of routes()) {
      const res = await f.request(who(), url);
      expectError(res, 404, "ERRORS.NOT_FOUND");
      expect(res.body).not.toContain(alice.id);
      const missing = await f.request(who(), none);
      expectError(missing, 404, "ERRORS.NOT_FOUND");
    }
  });

  it("another operator's callers do not find the price list either; the operator's own riders do", async () => {
    const uri = `/location/v1/price-lists/${fx.priceList("standard")}`;
    for (const who of [otherOperator, carol]) expectError(await f.request(who, uri), 404, "ERRORS.NOT_FOUND");
    expect((await f.request(bob, uri)).statusCode).toBe(200);
    expectError(await f.request(admin, `/location/v1/price-lists/${NOBODY}`), 404, "ERRORS.NOT_FOUND");
  });

  it("malformed ids are 400", async () => {
    for (const url of [
      `/session/v2/users/alice/sessions/${session}`,
      `/session/v1/device-sessions/not-a-uuid`,
      `/session/v1/payments/1`,
      `/location/v1/price-lists/standard`,
    ])
      expectError(await f.request(admin, url), 400, "ERRORS.VALIDATION_FAILED");
  });
});
