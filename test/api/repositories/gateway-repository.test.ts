import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySecret } from "../../../cloud/auth/secrets.ts";
import { gatewayRepository } from "../../../cloud/gateway-link/gateway-repository.ts";
import { fx, OP_A, OP_B, SECRET } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

describe("gateway repository", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());
  const repo = () => gatewayRepository(store.db);

  it("finds a gateway by id, and nothing for an unknown one", async () => {
    const gw = await repo().find("gw-a1");
    expect(gw).toMatchObject({ id: "gw-a1", operator_id: OP_A, location_id: fx.location("L1") });
    expect(gw?.online).toBeNull();
    expect(gw?.heartbeat_at).toBeNull();
    expect(await repo().find("gw-none")).toBeUndefined();
  });

  it("lists every gateway's id in order", async () => {
    expect(await repo().allIds()).toEqual(["gw-a1", "gw-a2", "gw-a3", "gw-b1"]);
  });

  it("gives the secret hash a login is checked against, nothing for an unknown gateway", async () => {
    const hash = await repo().secretHashOf("gw-b1");
    expect(hash && (await verifySecret(SECRET, hash))).toBe(true);
    expect(await repo().secretHashOf("gw-none")).toBeUndefined();
  });

  it("tells the operator and location a gateway serves", async () => {
    expect(await repo().placeOf("gw-b1")).toEqual({ operator_id: OP_B, location_id: fx.location("B1") });
    expect(await repo().placeOf("gw-none")).toBeUndefined();
  });

  it("gives the gateway's location and its attributes", async () => {
    const loc = await repo().locationOf("gw-a1");
    expect(loc?.id).toBe(fx.location("L1"));
    expect(JSON.parse(loc?.attrs ?? "{}")).toMatchObject({ max_user_sessions: 2 });
    expect(await repo().locationOf("gw-none")).toBeUndefined();
  });

  it("stores map versions, read back for every gateway", async () => {
    const before = new Map((await repo().mapVersions()).map((r) => [r.id, r.map_version]));
    expect([...before.keys()].sort()).toEqual(["gw-a1", "gw-a2", "gw-a3", "gw-b1"]);
    await repo().setMapVersion("gw-a2", "v-test");
    const after = new Map((await repo().mapVersions()).map((r) => [r.id, r.map_version]));
    expect(after.get("gw-a2")).toBe("v-test");
    expect(after.get("gw-a1")).toBe(before.get("gw-a1"));
  });

  it("records a status and a heartbeat for that gateway only", async () => {
    await repo().setOnline("gw-a3", "2026-01-15T10:00:01.000Z", "session-1");
    await repo().setHeartbeatAt("gw-a3", "2026-01-15T10:00:02.000Z");
    expect(await repo().find("gw-a3")).toMatchObject({
      online: 1,
      status_at: "2026-01-15T10:00:01.000Z",
      heartbeat_at: "2026-01-15T10:00:02.000Z",
      session: "session-1",
    });
    expect(await repo().setOffline("gw-a3", "2026-01-15T10:00:03.000Z", "session-1")).toBe(true);
    expect(await repo().find("gw-a3")).toMatchObject({ online: 0, status_at: "2026-01-15T10:00:03.000Z" });
    expect((await repo().find("gw-a2"))?.online).toBeNull();
  });

  it("keeps a gateway online through the late Last Will of an earlier session", async () => {
    await repo().setOnline("gw-a3", "2026-01-15T10:00:01.000Z", "session-2");
    expect(await repo().setOffline("gw-a3", "2026-01-15T10:00:02.000Z", "session-1")).toBe(false);
    expect(await repo().find("gw-a3")).toMatchObject({ online: 1, status_at: "2026-01-15T10:00:01.000Z" });
    // A Will without a token (an older gateway) is taken as it always was.
    expect(await repo().setOffline("gw-a3", "2026-01-15T10:00:03.000Z", undefined)).toBe(true);
    expect((await repo().find("gw-a3"))?.online).toBe(0);
  });
});
