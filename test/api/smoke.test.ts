import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx } from "../support/fixture-site.ts";

describe("the fixture site", () => {
  let h: CloudHarness;
  beforeAll(async () => {
    h = await startCloudHarness();
  });
  afterAll(() => h.close());

  it("lists operator A's locations to an operator A client", async () => {
    const res = await h.call(CLIENTS.admin, { method: "GET", url: "/location/v1/locations" });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((l: { code: string }) => l.code)).toEqual(["D1", "H1", "L1"]);
  });

  it("locks a locker through the recording gateway", async () => {
    const res = await h.call(CLIENTS.admin, {
      method: "POST",
      url: `/device/v1/devices/${fx.device("L1", "1")}/commands`,
      payload: { command: "lock" },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().state.value).toBe("SENT");
    expect(h.gateways.last().gatewayId).toBe("gw-a1");
  });
});
