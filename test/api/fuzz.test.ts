import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FuzzTarget, startFuzzTarget } from "../fuzz/fuzz-target.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { declareFixtureWhitelists } from "../support/fixture-whitelists.ts";

/**
 * The CI-sized fuzz run (docs/decisions/tooling.md, Fuzzing): requests generated from the served OpenAPI
 * document, a tenth of them over a real socket. A fresh seed each run; fast-check prints it with the
 * shrunk counterexample, and FUZZ_SEED replays it. `npm run fuzz` is the long run.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 4_000);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

describe("fuzzing the API from its OpenAPI document", () => {
  let h: CloudHarness;
  let target: FuzzTarget;
  beforeAll(async () => {
    h = await startCloudHarness();
    await declareFixtureWhitelists(h);
    target = await startFuzzTarget(h, { socketShare: 0.1 });
  });
  afterAll(() => h.close());

  it("answers valid, mutated and hostile requests, with either tenant's token or none, without a 5xx, every error in the envelope and every status one the document lists", async () => {
    await fc.assert(
      fc.asyncProperty(target.requests, async (req) => {
        const { violations, report } = await target.send(req);
        if (violations.length > 0) throw new Error(report);
      }),
      { numRuns: RUNS, includeErrorInReport: true, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  }, 300_000);

  it("reached every documented operation, paths and methods it does not have, both transports and both tenants", () => {
    const { stats, operations } = target;
    for (const op of operations) {
      const label = `${op.method} ${op.path}`;
      expect(stats.byDestination.get(label)?.sent ?? 0, label).toBeGreaterThanOrEqual(
        RUNS / operations.length / 4,
      );
    }
    expect(stats.byDestination.get("unknown path")?.sent ?? 0).toBeGreaterThan(0);
    expect(stats.byDestination.get("wrong method")?.sent ?? 0).toBeGreaterThan(0);
    expect(stats.byTransport.socket).toBeGreaterThanOrEqual(RUNS / 20);
    const tokens = [...stats.credentials.keys()].filter((k) => k.startsWith("token "));
    expect(tokens.some((k) => k.startsWith("token a-"))).toBe(true);
    expect(tokens).toContain("token b-admin");
    // Not all refusals: valid requests get through to the handlers.
    const ok = [...stats.statuses].filter(([s]) => s >= 200 && s < 300).reduce((n, [, c]) => n + c, 0);
    expect(ok).toBeGreaterThanOrEqual(RUNS / 10);
  });
});
