import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { signedInStaff } from "../support/console-api.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";
import { openSse, type SseStream } from "../support/sse.ts";
import { openReplicaDb, openTestDb } from "../support/test-db.ts";

const L1 = fx.location("L1");

// Two replicas of the cloud on one PostgreSQL store: a console stream open on replica A hears of a change
// applied through replica B, since the watch reads the shared store, not this process's own writes.
// PostgreSQL only (`*.postgres.test.ts`): replicas share a PostgreSQL store.
describe("the console's live stream across replicas", () => {
  const replicas: CloudHarness[] = [];
  let stream: SseStream | undefined;
  beforeAll(async () => {
    const store = await openTestDb("postgres");
    const clock = new FakeClock();
    replicas.push(await startCloudHarness({ store, clock }));
    replicas.push(await startCloudHarness({ store: await openReplicaDb(store), clock }));
  });
  afterAll(async () => {
    stream?.close();
    // The second holds a handle on the first one's schema: it lets go first, then the schema goes.
    for (const h of replicas.reverse()) await h.close();
  });

  it("carries to replica A's stream a command sent through replica B", async () => {
    const [a, b] = replicas as [CloudHarness, CloudHarness];
    await a.app.listen({ port: 0, host: "127.0.0.1" });
    const { cookie } = await signedInStaff(a, "viewer@a.example", "viewer", OP_A);
    const port = (a.app.server.address() as AddressInfo).port;
    stream = await openSse(`http://127.0.0.1:${port}/console/api/live`, {
      cookie: `console_session=${cookie}`,
    });
    expect(stream.status).toBe(200);
    await stream.next((e) => e.event === "ready");

    const sent = await b.call(CLIENTS.admin, {
      method: "POST",
      url: `/device/v1/devices/${fx.device("L1", "1")}/commands`,
      payload: { command: "lock" },
    });
    expect(sent.statusCode).toBeLessThan(300);
    await stream.next((e) => e.event === "commands");
    const moved = await stream.next((e) => e.event === "location" && (e.data as { id: string }).id === L1);
    expect(moved.data).toMatchObject({ id: L1, data_version: expect.any(Number) });
  });
});
