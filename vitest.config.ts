import { defineConfig } from "vitest/config";

// HTTP-level suites run twice: once on SQLite, once on PostgreSQL (test/support/test-db.ts reads TEST_DB).
export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
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
      { test: { name: "api-sqlite", include: ["test/api/**/*.test.ts"], env: { TEST_DB: "sqlite" } } },
      { test: { name: "api-postgres", include: ["test/api/**/*.test.ts"], env: { TEST_DB: "postgres" } } },
      {
        test: { name: "integration", include: ["test/integration/**/*.test.ts"], env: { TEST_DB: "sqlite" } },
      },
    ],
  },
});
