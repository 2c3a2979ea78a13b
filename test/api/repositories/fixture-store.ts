import { applyManifest } from "../../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../../cloud/manifest/manifest-schema.ts";
import { fixtureSecretHash } from "../../support/cloud-harness.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { fixtureManifest } from "../../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

/** A fresh store holding the fixture site (two operators, their locations, gateways and devices). */
export async function openFixtureStore(): Promise<TestDb & { clock: FakeClock }> {
  const store = await openTestDb();
  const clock = new FakeClock();
  await applyManifest(store.db, SiteManifest.parse(fixtureManifest(await fixtureSecretHash())), clock);
  return Object.assign(store, { clock });
}
