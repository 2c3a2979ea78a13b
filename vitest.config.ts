import { defineConfig } from "vitest/config";

/**
 * The suites by what they exercise, each runnable alone (`npx vitest run --project gateway`); `npm test` runs
 * them all. The HTTP suites run twice: on SQLite and on PostgreSQL (test/support/test-db.ts reads TEST_DB).
 * Suites that cross processes, sockets and brokers reuse one worker (`isolate: false`, docs/decisions/tooling.md).
 */
const crossing = (
  name: string,
  include: string[],
  env: Record<string, string> = { TEST_DB: "sqlite" },
  exclude: string[] = [],
) => ({
  extends: true as const,
  test: { name, isolate: false, include, env, ...(exclude.length ? { exclude } : {}) },
});

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    coverage: {
      provider: "v8",
      // The pure core every decision rests on: the state machines, the rules and the hardware protocol.
      include: ["shared/domain/**/*.ts", "shared/protocol/**/*.ts"],
      exclude: ["**/*.test.ts"],
      reporter: ["text-summary"],
      thresholds: { statements: 98, branches: 96, functions: 95, lines: 98 },
    },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: [
            "shared/**/*.test.ts",
            "cloud/**/*.test.ts",
            "gateway/**/*.test.ts",
            "hardware-sim/**/*.test.ts",
          ],
        },
      },
      // `*.postgres.test.ts`: what only PostgreSQL has (a batch statement, parallel workers).
      crossing("api-sqlite", ["test/api/**/*.test.ts"], { TEST_DB: "sqlite" }, [
        "test/api/**/*.postgres.test.ts",
      ]),
      crossing("api-postgres", ["test/api/**/*.test.ts"], { TEST_DB: "postgres" }),
      // Each port's contract, run on every implementation and on the doubles that stand in for one.
      crossing("contracts", ["test/contracts/**/*.test.ts"]),
      // The daemon's parts on the simulator, over their ports.
      crossing("gateway", ["test/gateway/**/*.test.ts"]),
      // The simulated hardware speaks what real hardware speaks.
      crossing("simulator", ["test/simulator/**/*.test.ts"]),
      // The cloud against real brokers and stores: the gateway link, broker limits, replicas, migrations.
      crossing("cloud", ["test/cloud/**/*.test.ts"]),
      // Whole sites and the demo: cloud, broker, gateway and simulator together.
      crossing("e2e", ["test/e2e/**/*.test.ts"]),
      // What operators and technicians run: the CLIs, the build, the entry points, the units, the logs.
      crossing("ops", ["test/ops/**/*.test.ts"]),
      // Pages as people open them, in Debian's Chromium (test/support/browser.ts).
      crossing("browser", ["test/browser/**/*.test.ts"]),
      // The whole system in one process on a virtual clock, faults drawn from a seed (docs/simulation.md).
      crossing("simulation", ["test/simulation/**/*.test.ts"]),
      // The real daemon as its own process under its host's faults: link, clock, disk, freezes, kills
      // (docs/faults.md), on the real Mosquitto and PostgreSQL.
      crossing("faults", ["test/faults/**/*.test.ts"], { TEST_DB: "postgres" }),
    ],
  },
});
