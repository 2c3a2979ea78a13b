import { defineConfig } from "vitest/config";

// HTTP-level suites run twice: once on SQLite, once on PostgreSQL (test/support/test-db.ts reads TEST_DB).
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
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
      {
        extends: true,
        test: {
          name: "api-sqlite",
          isolate: false,
          include: ["test/api/**/*.test.ts"],
          env: { TEST_DB: "sqlite" },
        },
      },
      {
        extends: true,
        test: {
          name: "api-postgres",
          isolate: false,
          include: ["test/api/**/*.test.ts"],
          env: { TEST_DB: "postgres" },
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          isolate: false,
          // Port contract suites (test/contracts) cross real sockets and processes too.
          include: ["test/integration/**/*.test.ts", "test/contracts/**/*.test.ts"],
          env: { TEST_DB: "sqlite" },
        },
      },
    ],
  },
});
