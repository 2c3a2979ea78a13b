import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS } from "../support/fixture-site.ts";

/** Ids that cannot name anything: not UUIDs, of every shape a client might send. */
const MALFORMED = ["not-a-uuid", "L1", "12345", "0000000-0000-4000-8000-000000000000", "x".repeat(100)];

let h: CloudHarness;
beforeAll(async () => {
  h = await startCloudHarness();
});
afterAll(() => h.close());

const call = (opts: InjectOptions) => h.call(CLIENTS.admin, opts);

/**
 * Each route answers a malformed path id as its row of the spec's status table allows (Errors): a route
 * with a 404 says "not found", exactly as for a well-formed unknown id; the device list, which has no 404
 * (and no 400), lists nothing.
 */
describe.each(MALFORMED)("a malformed path id (%s)", (id) => {
  it.each([
    ["GET location", { method: "GET", url: `/location/v1/locations/${id}` }],
    ["PATCH location", { method: "PATCH", url: `/location/v1/locations/${id}`, payload: { label: "x" } }],
    ["GET device", { method: "GET", url: `/device/v1/devices/${id}` }],
    [
      "POST command",
      { method: "POST", url: `/device/v1/devices/${id}/commands`, payload: { command: "lock" } },
    ],
    ["GET command", { method: "GET", url: `/device/v1/commands/${id}` }],
    ["GET public-area locations", { method: "GET", url: `/location/v1/public-areas/${id}/locations` }],
  ] as [string, InjectOptions][])("%s answers 404 ERRORS.NOT_FOUND", async (_name, opts) => {
    const res = await call(opts);
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json()).toMatchObject({ error_code: "ERRORS.NOT_FOUND", status_code: 404 });
  });

  it("the device list answers 200 with an empty list, its uri naming the id as given", async () => {
    const res = await call({ method: "GET", url: `/device/v1/locations/${id}/devices` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], uri: `/device/v1/locations/${id}/devices` });
  });
});

describe("a malformed path id with a malformed body", () => {
  it("is a 400 for the body: the request is refused before any lookup", async () => {
    const res = await call({
      method: "POST",
      url: "/device/v1/devices/not-a-uuid/commands",
      payload: { command: "dance" },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_message).toContain("body.command");
  });
});

describe("radius without lat_lng", () => {
  it.each(["abc", "-5", "", "10&radius=x"])(
    "is ignored whatever its value (radius=%s): the list is the same as without it",
    async (radius) => {
      const plain = await call({ method: "GET", url: "/location/v1/locations" });
      const res = await call({ method: "GET", url: `/location/v1/locations?radius=${radius}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(plain.json());
    },
  );
});
