import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import type { CloudHarness } from "./cloud-harness.ts";
import { OP_A, OP_B } from "./fixture-site.ts";

/** A whitelist of each fixture operator, with a few cards and no targets yet. */
export const FIXTURE_WHITELISTS = {
  a: "f1f1f1f1-0000-4000-8000-00000000000a",
  b: "f1f1f1f1-0000-4000-8000-00000000000b",
} as const;

/**
 * Declares them through the site manifest, as the service operator would (apply never deletes, so the
 * rest of the fixture stays). For suites that need a whitelist to exist without caring which (the fuzzer).
 */
export async function declareFixtureWhitelists(h: CloudHarness): Promise<void> {
  const manifest = SiteManifest.parse({
    version: 1,
    operators: [
      {
        id: OP_A,
        name: "Operator A",
        whitelists: [
          {
            id: FIXTURE_WHITELISTS.a,
            name: "Fixture cards",
            entities: [{ id: "04a1b2c3d4" }, { id: "04a1b2c3d5", is_master_key: true }, { id: "0a0b" }],
          },
        ],
      },
      {
        id: OP_B,
        name: "Operator B",
        whitelists: [{ id: FIXTURE_WHITELISTS.b, name: "B cards", entities: [{ id: "0b0b" }] }],
      },
    ],
  });
  await applyManifest(h.db, manifest, h.clock);
}
