import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import type { Db } from "../../cloud/store/db.ts";
import { FakeClock } from "./fake-clock.ts";
import { OP_A, OP_B } from "./fixture-site.ts";

/**
 * The fixture's two operators, each with one location (`LA`, `LB`) holding the access lists given, applied
 * through the site manifest: what a repository suite's rows hang on.
 */
export async function seedOperators(
  db: Db,
  lists: {
    a?: { id: string; kind: "paid" | "closed" | "password"; name: string }[];
    b?: typeof lists.a;
  } = {},
): Promise<void> {
  const location = (code: string, accessLists: typeof lists.a = []) => ({
    code,
    label: `Location ${code}`,
    type: "BIKE_LOCKERS",
    latitude: 52.37,
    longitude: 4.89,
    access_lists: accessLists,
  });
  const manifest = SiteManifest.parse({
    version: 1,
    operators: [
      { id: OP_A, name: "Operator A", locations: [location("LA", lists.a)] },
      { id: OP_B, name: "Operator B", locations: [location("LB", lists.b)] },
    ],
  });
  await applyManifest(db, manifest, new FakeClock(new Date("2026-01-01T00:00:00Z")), {});
}
