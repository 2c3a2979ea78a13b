import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { apiClientRepository } from "../../../cloud/http/api-client-repository.ts";
import { applyManifest } from "../../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../../cloud/manifest/manifest-schema.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { OP_A, OP_B } from "../../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const HASH = "scrypt$stand-in-hash";

let store: TestDb;

beforeEach(async () => {
  store = await openTestDb();
  const manifest = SiteManifest.parse({
    version: 1,
    operators: [
      {
        id: OP_A,
        name: "Operator A",
        clients: [{ client_id: "a-admin", permissions: ["PUBLIC_TAG_MANAGEMENT"], secret_hash: HASH }],
      },
      {
        id: OP_B,
        name: "Operator B",
        clients: [{ client_id: "b-none", permissions: [], secret_hash: HASH }],
      },
    ],
  });
  await applyManifest(store.db, manifest, new FakeClock(), {});
});
afterEach(() => store.drop());

describe("apiClientRepository", () => {
  it("finds a client by client_id with its operator, secret hash and permissions", async () => {
    const clients = apiClientRepository(store.db);
    expect(await clients.find("a-admin")).toEqual({
      clientId: "a-admin",
      operatorId: OP_A,
      secretHash: HASH,
      permissions: ["PUBLIC_TAG_MANAGEMENT"],
    });
    expect(await clients.find("b-none")).toMatchObject({ operatorId: OP_B, permissions: [] });
    expect(await clients.find("nobody")).toBeUndefined();
  });
});
