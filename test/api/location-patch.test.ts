import { randomUUID } from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_B } from "../support/fixture-site.ts";

const L1 = fx.location("L1");
const L1_URL = `/location/v1/locations/${L1}`;

type Json = Record<string, unknown>;

function expectSpecError(res: LightMyRequestResponse, status: number, code: string): Json {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as Json;
  expect(Object.keys(body).sort()).toEqual(["correlation_id", "error_code", "error_message", "status_code"]);
  expect(body).toMatchObject({ status_code: status, error_code: code });
  expect(body.error_message).toEqual(expect.any(String));
  expect(body.correlation_id).toEqual(expect.any(String));
  return body;
}

/** L1 as the fixture defines it, seen by a client with every permission. */
const L1_AS_CREATED = {
  code: "L1",
  label: "Lockers one",
  name: "#L1 Lockers one",
  type: "BIKE_LOCKERS",
  address: "Street 1",
  latitude: 52.37,
  longitude: 4.89,
  tags: ["covered", "station"],
  private_tags: ["vip"],
  comment: "internal note",
  max_user_sessions: 2,
  support_email: "",
  support_phone: "",
  owner_id: "",
  free_parking_details: "",
};

function harness(each: boolean) {
  let current: CloudHarness | undefined;
  /** The harness of the running test (started by the hook below). */
  const ref = {
    get h(): CloudHarness {
      if (!current) throw new Error("the cloud harness has not started");
      return current;
    },
  };
  (each ? beforeEach : beforeAll)(async () => {
    current = await startCloudHarness();
  });
  (each ? afterEach : afterAll)(() => ref.h.close());
  const patch = (as: string, payload: unknown, url = L1_URL) =>
    ref.h.call(as, { method: "PATCH", url, payload: payload as Json });
  const get = async (as: string = CLIENTS.admin) => {
    const res = await ref.h.call(as, { method: "GET", url: L1_URL });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Json;
  };
  const expect204 = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe("");
  };
  return { ref, patch, get, expect204 };
}

describe("PATCH /location/v1/locations/:id that succeeds", () => {
  const { ref, patch, get, expect204 } = harness(true);

  it("answers 204 with no body, and the change shows on GET, in the list and in name", async () => {
    expect204(await patch(CLIENTS.basic, { label: "Renamed", address: "Street 2" }));
    expect(await get()).toMatchObject({ label: "Renamed", name: "#L1 Renamed", address: "Street 2" });
    const list = await ref.h.call(CLIENTS.basic, { method: "GET", url: "/location/v1/locations" });
    expect(list.json().data.find((l: Json) => l.id === L1)).toMatchObject({ label: "Renamed" });
  });

  it("lets a client without extra permissions change every field that needs none", async () => {
    const change = {
      code: "L1X",
      city: "Amsterdam",
      latitude: 52.1,
      longitude: 4.1,
      rfid_parking: true,
      booking_available: false,
      segment: "retail",
      app_parking: false,
      state: "NH",
      address: "Street 9",
      label: "Lockers nine",
      free_parking_hours: 3.5,
      e_charging: true,
      district: "Centrum",
      free_of_charge: true,
    };
    expect204(await patch(CLIENTS.basic, change));
    expect(await get(CLIENTS.basic)).toMatchObject({ ...change, name: "#L1X Lockers nine" });
  });

  it("leaves the fields it does not name alone", async () => {
    expect204(await patch(CLIENTS.basic, { city: "Utrecht" }));
    expect(await get()).toMatchObject({ ...L1_AS_CREATED, city: "Utrecht" });
  });

  it("accepts an empty body and changes nothing", async () => {
    expect204(await patch(CLIENTS.basic, {}));
    expect(await get()).toMatchObject(L1_AS_CREATED);
  });

  it("lets a SUPERADMIN change every superadmin field", async () => {
    const change = {
      support_phone: "+3120000000",
      description: "Big lockers",
      type: "BIKE_HOUSE",
      terms_url: "https://example.test/terms",
      generation: "G3",
      auto_restarts_enabled: true,
      power_save_strategy: "REMOTE_WAKEUP",
      use_case: "station",
      support_email: "help@example.test",
      max_user_sessions: 5,
      region: "Noord",
    };
    expect204(await patch(CLIENTS.admin, { ...change, icon_type: "lockers-v2" }));
    const after = await get();
    expect(after).toMatchObject(change);
    expect(after.icon).toMatchObject({ type: "lockers-v2" });
  });

  it("lets a client with organization management set the organization ids", async () => {
    const change = { owner_id: "owner-1", reseller_id: "reseller-1", distributor_id: "dist-1" };
    expect204(await patch(CLIENTS.admin, change));
    expect(await get()).toMatchObject(change);
  });

  it("treats operator_id as data: the location stays with its operator", async () => {
    expect204(await patch(CLIENTS.admin, { operator_id: OP_B }));
    expect(await get()).toMatchObject({ operator_id: OP_B });
    const asB = await ref.h.call(CLIENTS.other, { method: "GET", url: L1_URL });
    expect(asB.statusCode).toBe(404);
    const bList = await ref.h.call(CLIENTS.other, { method: "GET", url: "/location/v1/locations" });
    expect(bList.json().data.map((l: Json) => l.code)).toEqual(["B1"]);
    expect204(await patch(CLIENTS.admin, { label: "still mine" }));
    expect(await get()).toMatchObject({ label: "still mine" });
  });

  it("lets a client with RESTRICTED_FIELDS change the restricted fields", async () => {
    const change = { comment: "new note", free_parking_details: "2 h free", free_parking_summary: "free" };
    expect204(await patch(CLIENTS.admin, change));
    expect(await get()).toMatchObject(change);
  });

  it("lets a client with public tag management add and remove public tags", async () => {
    expect204(await patch(CLIENTS.tagger, { public_tags: { add: ["bike-lane"], remove: ["covered"] } }));
    expect((await get()).tags).toEqual(["station", "bike-lane"]);
    const filtered = await ref.h.call(CLIENTS.tagger, {
      method: "GET",
      url: "/location/v1/locations?tag=bike-lane",
    });
    expect(filtered.json().data.map((l: Json) => l.code)).toEqual(["L1"]);
  });

  it("lets a client with private tag management add and remove private tags", async () => {
    expect204(await patch(CLIENTS.admin, { private_tags: { add: ["gold"], remove: ["vip"] } }));
    const after = await get();
    expect(after.private_tags).toEqual(["gold"]);
    expect(after.tags).toEqual(["covered", "station"]);
  });

  it("lets the tag manager change a field that needs no permission along with public tags", async () => {
    expect204(await patch(CLIENTS.tagger, { label: "Tagged", public_tags: { add: ["new"] } }));
    expect(await get()).toMatchObject({ label: "Tagged", tags: ["covered", "station", "new"] });
  });

  it("adding a tag that is already there is idempotent", async () => {
    expect204(await patch(CLIENTS.tagger, { public_tags: { add: ["station"] } }));
    expect((await get()).tags).toEqual(["covered", "station"]);
    expect204(await patch(CLIENTS.tagger, { public_tags: { add: ["extra", "extra"] } }));
    expect204(await patch(CLIENTS.tagger, { public_tags: { add: ["extra"] } }));
    expect((await get()).tags).toEqual(["covered", "station", "extra"]);
    expect204(await patch(CLIENTS.admin, { private_tags: { add: ["vip"] } }));
    expect((await get()).private_tags).toEqual(["vip"]);
  });

  it("removing a tag that is not there is harmless", async () => {
    expect204(await patch(CLIENTS.tagger, { public_tags: { remove: ["never-there"] } }));
    expect((await get()).tags).toEqual(["covered", "station"]);
    expect204(await patch(CLIENTS.tagger, { public_tags: { remove: ["covered"] } }));
    expect204(await patch(CLIENTS.tagger, { public_tags: { remove: ["covered"] } }));
    expect((await get()).tags).toEqual(["station"]);
  });

  it("keeps other locations untouched", async () => {
    expect204(await patch(CLIENTS.admin, { label: "Changed", public_tags: { remove: ["station"] } }));
    const d1 = await ref.h.call(CLIENTS.admin, {
      method: "GET",
      url: `/location/v1/locations/${fx.location("D1")}`,
    });
    expect(d1.json()).toMatchObject({ label: "Docks one", tags: ["station"] });
  });

  it("loses no change when two clients patch different fields at the same time", async () => {
    const results = await Promise.all([
      patch(CLIENTS.admin, { comment: "from admin" }),
      patch(CLIENTS.basic, { city: "Haarlem" }),
      patch(CLIENTS.tagger, { public_tags: { add: ["concurrent"] } }),
      patch(CLIENTS.basic, { label: "Concurrent" }),
    ]);
    for (const r of results) expect204(r);
    expect(await get()).toMatchObject({
      comment: "from admin",
      city: "Haarlem",
      label: "Concurrent",
      tags: ["covered", "station", "concurrent"],
    });
  });
});

describe("PATCH /location/v1/locations/:id that is refused", () => {
  const { ref, patch, get } = harness(false);

  /** Each refusal must leave L1 exactly as the fixture made it. */
  const expectUnchanged = async () => expect(await get()).toMatchObject(L1_AS_CREATED);

  it.each([
    ["max_user_sessions", { max_user_sessions: 10 }],
    ["support_email", { support_email: "evil@example.test" }],
    ["type", { type: "BIKE_HOUSE" }],
    ["support_phone", { support_phone: "+1" }],
    ["description", { description: "x" }],
    ["region", { region: "x" }],
    ["generation", { generation: "x" }],
  ])("refuses the superadmin field %s to a client without SUPERADMIN with 403", async (field, body) => {
    for (const client of [CLIENTS.basic, CLIENTS.tagger]) {
      const err = expectSpecError(await patch(client, body), 403, "ERRORS.FORBIDDEN");
      expect(err.error_message).toContain(field);
    }
    await expectUnchanged();
  });

  it("S15: {label, max_user_sessions} as a non-superadmin is 403 and the label is not changed", async () => {
    const err = expectSpecError(
      await patch(CLIENTS.basic, { label: "Hijacked", max_user_sessions: 99 }),
      403,
      "ERRORS.FORBIDDEN",
    );
    expect(err.error_message).toContain("max_user_sessions");
    expect(err.error_message).not.toContain("label");
    await expectUnchanged();
  });

  it.each([
    ["owner_id", { owner_id: "someone" }],
    ["operator_id", { operator_id: OP_B }],
    ["reseller_id", { reseller_id: "someone" }],
    ["distributor_id", { distributor_id: "someone" }],
  ])("refuses the organization field %s without organization management", async (field, body) => {
    for (const client of [CLIENTS.basic, CLIENTS.tagger]) {
      expect(expectSpecError(await patch(client, body), 403, "ERRORS.FORBIDDEN").error_message).toContain(
        field,
      );
    }
    await expectUnchanged();
    expect((await get()).operator_id).not.toBe(OP_B);
  });

  it.each([
    ["comment", { comment: "overwritten" }],
    ["free_parking_details", { free_parking_details: "x" }],
    ["free_parking_summary", { free_parking_summary: "x" }],
  ])("refuses the restricted field %s without RESTRICTED_FIELDS", async (field, body) => {
    for (const client of [CLIENTS.basic, CLIENTS.tagger]) {
      expect(expectSpecError(await patch(client, body), 403, "ERRORS.FORBIDDEN").error_message).toContain(
        field,
      );
    }
    await expectUnchanged();
  });

  it("refuses public tags without public tag management", async () => {
    expectSpecError(await patch(CLIENTS.basic, { public_tags: { add: ["x"] } }), 403, "ERRORS.FORBIDDEN");
    await expectUnchanged();
  });

  it("refuses private tags to the public tag manager", async () => {
    const err = expectSpecError(
      await patch(CLIENTS.tagger, { private_tags: { add: ["sneaky"], remove: ["vip"] } }),
      403,
      "ERRORS.FORBIDDEN",
    );
    expect(err.error_message).toContain("private_tags");
    await expectUnchanged();
  });

  it("refuses the whole request when one field of several is not allowed (all-or-nothing)", async () => {
    expectSpecError(
      await patch(CLIENTS.tagger, { label: "x", public_tags: { add: ["y"] }, comment: "z" }),
      403,
      "ERRORS.FORBIDDEN",
    );
    await expectUnchanged();
  });

  describe("S16: bad bodies", () => {
    const BAD: [what: string, field: string, body: Json][] = [
      ["an unknown field", "colour", { colour: "red" }],
      ["the read-only field connection", "connection", { connection: "offline" }],
      ["the read-only field id", "id", { id: randomUUID() }],
      ["the read-only field name", "name", { name: "#X y" }],
      ["the read-only field status", "status", { status: "MAINTENANCE" }],
      ["the read-only field devices", "devices", { devices: { total: 0 } }],
      ["the list field tags (public_tags is the way)", "tags", { tags: ["x"] }],
      ["a wrong type", "free_of_charge", { free_of_charge: "yes" }],
      ["a number as a string", "latitude", { latitude: "52.1" }],
      ["a latitude out of range", "latitude", { latitude: 91 }],
      ["a null", "label", { label: null }],
      ["a tag change that is not an object of lists", "public_tags", { public_tags: ["x"] }],
      ["an unknown key in a tag change", "public_tags", { public_tags: { put: ["x"] } }],
      ["a type outside the spec's list", "type", { type: "SPACESHIP" }],
      ["a javascript: terms URL", "terms_url", { terms_url: "javascript:alert(1)" }],
      ["a plain-http terms URL", "terms_url", { terms_url: "http://example.test/terms" }],
      ["a terms URL without a host", "terms_url", { terms_url: "https://" }],
      ["a terms URL that is not a URL", "terms_url", { terms_url: "terms and conditions" }],
      ["a support e-mail that is not an address", "support_email", { support_email: "help-desk" }],
      ["a support e-mail with two @", "support_email", { support_email: "a@b@example.test" }],
      ["an empty label", "label", { label: "" }],
      ["a blank label", "label", { label: "   " }],
      ["an empty code", "code", { code: "" }],
      ["a blank code", "code", { code: " " }],
      ["a public tag over 64 characters", "public_tags", { public_tags: { add: ["x".repeat(65)] } }],
      [
        "a private tag to remove over 64 characters",
        "private_tags",
        { private_tags: { remove: ["x".repeat(65)] } },
      ],
      [
        "more than 50 tags to add at once",
        "public_tags",
        { public_tags: { add: Array.from({ length: 51 }, (_, i) => `tag-${i}`) } },
      ],
      [
        "more than 50 tags to remove at once",
        "private_tags",
        { private_tags: { remove: Array.from({ length: 51 }, (_, i) => `tag-${i}`) } },
      ],
    ];

    it.each(BAD)("answers 400 VALIDATION_FAILED for %s (%s) and changes nothing", async (_, __, body) => {
      for (const client of [CLIENTS.admin, CLIENTS.basic]) {
        expectSpecError(await patch(client, body), 400, "ERRORS.VALIDATION_FAILED");
      }
      await expectUnchanged();
    });

    it("refuses a valid field sent with an invalid one, changing nothing", async () => {
      expectSpecError(
        await patch(CLIENTS.admin, { label: "x", connection: "online" }),
        400,
        "ERRORS.VALIDATION_FAILED",
      );
      expectSpecError(
        await patch(CLIENTS.admin, { label: "x", free_of_charge: "yes" }),
        400,
        "ERRORS.VALIDATION_FAILED",
      );
      await expectUnchanged();
    });

    it.each(BAD)("names the field in the message for %s (%s)", async (_, field, body) => {
      expect(
        expectSpecError(await patch(CLIENTS.admin, body), 400, "ERRORS.VALIDATION_FAILED").error_message,
      ).toContain(field);
    });

    it("answers 400 for a body that is not JSON", async () => {
      const res = await ref.h.call(CLIENTS.admin, {
        method: "PATCH",
        url: L1_URL,
        headers: { "content-type": "application/json" },
        payload: "{label:",
      });
      expectSpecError(res, 400, "ERRORS.VALIDATION_FAILED");
      await expectUnchanged();
    });
  });

  it("answers 404 for an unknown location and for an id that is not a uuid (no such location)", async () => {
    expectSpecError(
      await patch(CLIENTS.admin, { label: "x" }, `/location/v1/locations/${randomUUID()}`),
      404,
      "ERRORS.NOT_FOUND",
    );
    expectSpecError(
      await patch(CLIENTS.admin, { label: "x" }, "/location/v1/locations/L1"),
      404,
      "ERRORS.NOT_FOUND",
    );
  });

  it("answers 401 without a bearer token", async () => {
    const res = await ref.h.call(null, { method: "PATCH", url: L1_URL, payload: { label: "anon" } });
    expectSpecError(res, 401, "ERRORS.UNAUTHORIZED");
    await expectUnchanged();
  });

  it("another operator cannot patch A's location, even with every permission", async () => {
    expectSpecError(await patch(CLIENTS.other, { label: "B was here" }), 404, "ERRORS.NOT_FOUND");
    await expectUnchanged();
    expect((await get()).operator_id).not.toBe(OP_B);
  });
});

describe("PATCH /location/v1/locations/:id field rules", () => {
  const { ref, patch, get, expect204 } = harness(true);
  const urlOf = (code: string) => `/location/v1/locations/${fx.location(code)}`;
  const getAt = async (code: string) =>
    (await ref.h.call(CLIENTS.admin, { method: "GET", url: urlOf(code) })).json() as Json;

  it("accepts an https terms URL and an e-mail address, and clears both with an empty string", async () => {
    expect204(
      await patch(CLIENTS.admin, {
        terms_url: "https://example.test/t?x=1",
        support_email: "a.b+c@example.test",
      }),
    );
    expect(await get()).toMatchObject({
      terms_url: "https://example.test/t?x=1",
      support_email: "a.b+c@example.test",
    });
    expect204(await patch(CLIENTS.admin, { terms_url: "", support_email: "" }));
    expect(await get()).toMatchObject({ terms_url: "", support_email: "" });
  });

  it.each([
    [
      "terms_url",
      "javascript:alert(1)",
      "body.terms_url: must be an https:// URL with a host name, or empty",
    ],
    [
      "terms_url",
      "http://example.test/terms",
      "body.terms_url: must be an https:// URL with a host name, or empty",
    ],
    ["support_email", "help-desk", "body.support_email: must be an e-mail address, or empty"],
  ])("explains the rule for %s = %j once, in plain words", async (field, value, message) => {
    const res = await patch(CLIENTS.admin, { [field]: value });
    expect(expectSpecError(res, 400, "ERRORS.VALIDATION_FAILED").error_message).toBe(message);
  });

  it("accepts tags of exactly 64 characters", async () => {
    const tag = "t".repeat(64);
    expect204(await patch(CLIENTS.admin, { public_tags: { add: [tag] }, private_tags: { add: [tag] } }));
    const after = await get();
    expect(after.tags).toContain(tag);
    expect(after.private_tags).toContain(tag);
  });

  it("refuses a change that would leave a location more than 50 public tags, and lets one at the limit swap tags", async () => {
    const many = Array.from({ length: 48 }, (_, i) => `tag-${i}`);
    expect204(await patch(CLIENTS.admin, { public_tags: { add: many } }));
    expect((await get()).tags).toHaveLength(50);

    const err = expectSpecError(
      await patch(CLIENTS.admin, { label: "Too many", public_tags: { add: ["one-more"] } }),
      400,
      "ERRORS.VALIDATION_FAILED",
    );
    expect(err.error_message).toContain("public_tags");
    expect(err.error_message).toContain("50");
    expect(await get()).toMatchObject({ label: "Lockers one" });
    expect((await get()).tags).toHaveLength(50);

    expect204(await patch(CLIENTS.admin, { public_tags: { add: ["swapped"], remove: ["tag-0"] } }));
    expect((await get()).tags).toHaveLength(50);
    expect((await get()).tags).toContain("swapped");
  });

  it("refuses a change that would leave a location more than 50 private tags", async () => {
    const many = Array.from({ length: 50 }, (_, i) => `p-${i}`);
    const err = expectSpecError(
      await patch(CLIENTS.admin, { private_tags: { add: many } }),
      400,
      "ERRORS.VALIDATION_FAILED",
    );
    expect(err.error_message).toContain("private_tags");
    expect((await get()).private_tags).toEqual(["vip"]);
  });

  it.each([
    ["L1", "BIKE_DOCKS", ["LOCKER"]],
    ["L1", "SCOOTER_DOCKS", ["LOCKER"]],
    ["D1", "BIKE_LOCKERS", ["BIKE_DOCK", "DOCK", "DOCK_SESSIONLESS"]],
    ["H1", "BIKE_LOCKERS", ["BIKE_HOUSE_DOOR", "DOOR"]],
  ])(
    "refuses to turn %s into %s because of its %j devices, changing nothing",
    async (code, type, misfits) => {
      const before = await getAt(code);
      const err = expectSpecError(
        await ref.h.call(CLIENTS.admin, {
          method: "PATCH",
          url: urlOf(code),
          payload: { label: "Changed", type },
        }),
        400,
        "ERRORS.VALIDATION_FAILED",
      );
      expect(err.error_message).toContain("body.type");
      for (const d of misfits) expect(err.error_message).toContain(d);
      expect(await getAt(code)).toMatchObject({ type: before.type, label: before.label });
    },
  );

  it.each([
    ["L1", "BIKE_HANGAR"],
    ["D1", "BIKE_HOUSE_DOCKLESS"],
    ["H1", "BIKE_HANGAR"],
    ["L1", "BIKE_LOCKERS"],
  ])("lets %s become %s, which fits the devices it holds", async (code, type) => {
    const res = await ref.h.call(CLIENTS.admin, { method: "PATCH", url: urlOf(code), payload: { type } });
    expect204(res);
    expect(await getAt(code)).toMatchObject({ type });
  });
});
