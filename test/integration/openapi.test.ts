import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../shared/errors.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";

/** Every public route of the spec this service serves, and nothing undocumented besides. */
const INVENTORY = [
  "post /oauth2/token",
  "get /location/v1/locations",
  "get /location/v1/locations/{id}",
  "patch /location/v1/locations/{id}",
  "get /location/v1/public-areas",
  "get /location/v1/public-areas/{public_area_id}/locations",
  "get /device/v1/locations/{location_id}/devices",
  "get /device/v1/devices/{device_id}",
  "post /device/v1/devices/{device_id}/commands",
  "get /device/v1/commands/{command_id}",
].sort();

type Operation = {
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
  security?: unknown[];
};
type Doc = {
  openapi: string;
  info: { description: string };
  paths: Record<string, Record<string, Operation>>;
};

describe("the OpenAPI document", () => {
  let h: CloudHarness;
  let doc: Doc;
  beforeAll(async () => {
    h = await startCloudHarness();
    const res = await h.app.inject({ method: "GET", url: "/openapi.json" });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(() => h.close());

  it("is OpenAPI 3.1 and lists exactly the served routes", () => {
    expect(doc.openapi).toBe("3.1.0");
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `${m} ${p}`),
    );
    expect(documented.sort()).toEqual(INVENTORY);
  });

  it("serves every documented route (none answers 404 for an unknown route)", async () => {
    for (const entry of INVENTORY) {
      const [method, path] = entry.split(" ") as [string, string];
      const url = path.replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000");
      const res = await h.app.inject({ method: method.toUpperCase() as "GET", url });
      expect(res.json().error_message ?? "", entry).not.toMatch(/^Route /);
    }
  });

  it("documents the error statuses of every operation with the standard error body", () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const statuses = Object.keys(op.responses);
        expect(
          statuses.some((s) => s.startsWith("2")),
          `${method} ${path}`,
        ).toBe(true);
        expect(statuses, `${method} ${path}`).toContain("500");
        if (path !== "/location/v1/public-areas/{public_area_id}/locations" && path !== "/oauth2/token") {
          expect(statuses, `${method} ${path}`).toContain("401");
        }
      }
    }
  });

  it("documents the statuses answered before a route runs: 400, 405, 408, 431 everywhere, 414 with path parameters", () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const statuses = Object.keys(op.responses);
        for (const status of ["400", "405", "408", "431"])
          expect(statuses, `${method} ${path}`).toContain(status);
        if (path.includes("{")) expect(statuses, `${method} ${path}`).toContain("414");
        if (method === "patch" || method === "post") expect(statuses, `${method} ${path}`).toContain("413");
      }
    }
  });

  it("names every error code", () => {
    for (const code of ERROR_CODES) expect(doc.info.description).toContain(code);
  });

  it("marks the public map as needing no token", () => {
    expect(doc.paths["/location/v1/public-areas/{public_area_id}/locations"]?.get?.security).toEqual([]);
  });

  it("serves the interactive docs page", async () => {
    const res = await h.app.inject({ method: "GET", url: "/docs/" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toContain("text/html");
    expect(res.body).toContain("swagger-ui");
  });
});
