import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { applyManifest } from "../../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../../cloud/manifest/manifest-schema.ts";
import {
  type WebhookEndpoint,
  webhookEndpointRepository,
} from "../../../cloud/webhooks/webhook-endpoint-repository.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { OP_A, OP_B } from "../../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const TS = "2026-01-15T10:00:00.000Z";
const LATER = "2026-01-15T11:00:00.000Z";
let n = 0;

function endpoint(o: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  n++;
  return {
    id: `e1e1e1e1-0000-4000-8000-${String(n).padStart(12, "0")}`,
    operatorId: OP_A,
    url: `https://hooks.example/${n}`,
    secrets: ["whsec_new", "whsec_old"],
    types: ["alarm", "status"],
    delivery: "aggregated",
    allowPrivate: false,
    enabled: true,
    disabledReason: null,
    createdAt: TS,
    updatedAt: TS,
    ...o,
  };
}

describe("webhook endpoint repository", () => {
  let store: TestDb;
  let repo: ReturnType<typeof webhookEndpointRepository>;

  beforeAll(async () => {
    store = await openTestDb();
    const operators = [OP_A, OP_B].map((id) => ({ id, name: id }));
    await applyManifest(store.db, SiteManifest.parse({ version: 1, operators }), new FakeClock(TS), {});
    repo = webhookEndpointRepository(store.db);
  });
  afterAll(() => store.drop());
  beforeEach(async () => {
    for (const e of await repo.all()) await repo.disable(e.id, "retired by an earlier test", TS);
  });

  it("inserts and finds an endpoint as it was given; an unknown id is undefined", async () => {
    const e = endpoint({ allowPrivate: true, delivery: "direct" });
    await repo.insert(e);
    expect(await repo.find(e.id)).toEqual(e);
    expect(await repo.find("e1e1e1e1-0000-4000-8000-ffffffffffff")).toBeUndefined();
  });

  it("updates the settings and the time, not the identity", async () => {
    const e = endpoint();
    await repo.insert(e);
    const settings = {
      url: "https://hooks.example/moved",
      secrets: ["whsec_only"],
      types: ["connection" as const],
      delivery: "direct" as const,
      allowPrivate: true,
      enabled: true,
      disabledReason: null,
    };
    await repo.update(e.id, settings, LATER);
    expect(await repo.find(e.id)).toEqual({ ...e, ...settings, updatedAt: LATER });
  });

  it("disables with a reason; a disabled endpoint is neither enabled nor subscribed", async () => {
    const e = endpoint({ types: ["alarm"] });
    await repo.insert(e);
    expect(await repo.enabledIds(OP_A)).toEqual([e.id]);
    await repo.disable(e.id, "answered 410 Gone", LATER);
    expect(await repo.find(e.id)).toMatchObject({
      enabled: false,
      disabledReason: "answered 410 Gone",
      updatedAt: LATER,
    });
    expect(await repo.enabledIds(OP_A)).toEqual([]);
    expect(await repo.subscribed(OP_A, "alarm")).toEqual([]);
  });

  it("lists the operator's enabled endpoints subscribed to a type, by id, of one delivery when asked", async () => {
    const direct = endpoint({ id: "e1e1e1e1-0000-4000-8000-a00000000002", delivery: "direct" });
    const aggregated = endpoint({ id: "e1e1e1e1-0000-4000-8000-a00000000001" });
    const otherType = endpoint({ types: ["connection"] });
    const otherOperator = endpoint({ operatorId: OP_B });
    for (const e of [direct, aggregated, otherType, otherOperator]) await repo.insert(e);
    expect((await repo.subscribed(OP_A, "alarm")).map((e) => e.id)).toEqual([aggregated.id, direct.id]);
    expect((await repo.subscribed(OP_A, "alarm", "direct")).map((e) => e.id)).toEqual([direct.id]);
    expect((await repo.subscribed(OP_A, "connection")).map((e) => e.id)).toEqual([otherType.id]);
    expect((await repo.subscribed(OP_B, "alarm")).map((e) => e.id)).toEqual([otherOperator.id]);
    expect((await repo.enabledIds(OP_B)).sort()).toEqual([otherOperator.id]);
  });

  it("lists every endpoint, enabled or not, by operator then id", async () => {
    const b = endpoint({ operatorId: OP_B });
    const a = endpoint();
    for (const e of [b, a]) await repo.insert(e);
    const all = await repo.all();
    const sorted = [...all].sort(
      (x, y) => x.operatorId.localeCompare(y.operatorId) || x.id.localeCompare(y.id),
    );
    expect(all).toEqual(sorted);
    expect(all.map((e) => e.id)).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(all.filter((e) => e.enabled).map((e) => e.id)).toEqual([a.id, b.id]);
  });
});
