import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { freePort } from "../support/private-mosquitto.ts";
import { type Site, startSite } from "../support/site-harness.ts";

describe("the gateway's Prometheus metrics", () => {
  let site: Site;
  let url: string;
  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/metrics`;
    site = await startSite({
      broker: "aedes",
      serial: "memory",
      gateway: { metrics: { host: "127.0.0.1", port } },
    });
    await eventually(
      async () =>
        expect((await site.status()).buses[0]?.boards.find((b) => b.addr === 1)?.reachable).toBe(true),
      20_000,
    );
  });
  afterAll(() => site.stop());

  it("counts commands by name and result, and reports the link, bus, boards and outbox", async () => {
    const post = await site.api("POST", `/device/v1/devices/${fx.device("L1", "1")}/commands`, {
      command: "lock",
    });
    await eventually(
      async () =>
        expect((await site.api("GET", `/device/v1/commands/${post.json().id}`)).json().state.value).toBe(
          "SUCCESS",
        ),
      20_000,
    );
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const body = await res.text();
    expect(body).toMatch(/^parking_gateway_commands_total\{name="lock",result="success"\} 1$/m);
    expect(body).toMatch(/^parking_gateway_broker_connected 1$/m);
    expect(body).toMatch(/^parking_gateway_bus_open\{bus="bus0"\} 1$/m);
    expect(body).toMatch(/^parking_gateway_board_reachable\{bus="bus0",board="1"\} 1$/m);
    expect(body).toMatch(/^parking_gateway_outbox_pending \d+$/m);
    expect(body).toMatch(/^parking_gateway_nodejs_eventloop_lag_seconds /m);
  });

  it("answers 404 off the metrics path", async () => {
    expect((await fetch(url.replace("/metrics", "/other"))).status).toBe(404);
  });
});
