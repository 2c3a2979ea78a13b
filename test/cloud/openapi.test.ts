import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../shared/api/errors.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";

/** Every public route of the spec this service serves, and nothing undocumented besides. */
const INVENTORY = [
  "post /oauth2/token",
  "post /external-users-auth/v1/sign-up",
  "post /external-users-auth/v1/sign-in",
  "post /external-users-auth/v1/refresh",
  "get /location/v1/locations",
  "get /location/v1/locations/{id}",
  "patch /location/v1/locations/{id}",
  "get /location/v1/public-areas",
  "get /location/v1/public-areas/{public_area_id}/locations",
  "get /device/v1/locations/{location_id}/devices",
  "get /device/v1/devices/{device_id}",
  "post /device/v1/devices/{device_id}/commands",
  "get /device/v1/commands/{command_id}",
  // A take-photo's photo (the value of its RESPONSE_PHOTO_TAKEN event).
  "get /device/v1/commands/{command_id}/photo",
  // Read-only resources a location links to (every uri resolves).
  "get /location/v1/locations/{id}/subscriptions",
  "get /location/v1/locations/{id}/descriptions",
  "get /location/v1/locations/{id}/external-devices",
  "get /location/v1/locations/{id}/rental-devices",
  "get /location/v1/locations/{id}/organizations",
  "get /location/v1/locations/{id}/audit",
  "get /whitelist/v1/locations/{location_id}/whitelists",
  "get /whitelist/v1/whitelists",
  "get /whitelist/v1/whitelists/{whitelist_id}",
  "get /whitelist/v1/whitelists/{whitelist_id}/entities",
  "post /whitelist/v1/whitelists/{whitelist_id}/entities",
  "get /whitelist/v1/whitelists/{whitelist_id}/targets",
  "post /whitelist/v1/whitelists/{whitelist_id}/targets",
  "get /session/v2/sessions",
  "get /session/v2/users/{user_id}/sessions/{session_id}",
  "get /session/v1/device-sessions",
  "get /session/v1/device-sessions/{session_id}",
  "get /session/v1/devices/{device_id}/sessions",
  "get /session/v1/payments/{payment_id}",
  "get /location/v1/price-lists/{price_list_id}",
  "get /access-control/v1/mgmt/access-lists/{access_list_id}/users",
  "post /access-control/v1/mgmt/access-lists/{access_list_id}/users",
  "post /access-control/v1/mgmt/access-lists/{access_list_id}/remove-user",
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
        const isPublic =
          path === "/location/v1/public-areas/{public_area_id}/locations" ||
          path === "/oauth2/token" ||
          path.startsWith("/external-users-auth/");
        if (!isPublic) {
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

  it("documents the access-list routes' own statuses: 403 for riders' tokens, 404 for lists not the caller's", () => {
    const lists = "/access-control/v1/mgmt/access-lists/{access_list_id}";
    const statuses = (path: string, method: string) =>
      Object.keys(doc.paths[path]?.[method]?.responses ?? {});
    expect(statuses(`${lists}/users`, "get")).toEqual(
      expect.arrayContaining(["200", "400", "401", "403", "404", "500"]),
    );
    for (const path of [`${lists}/users`, `${lists}/remove-user`])
      expect(statuses(path, "post")).toEqual(
        expect.arrayContaining(["204", "400", "401", "403", "404", "409", "413", "415", "422", "500"]),
      );
  });

  it("documents the session routes: v1 deprecated, 404 only where an id is looked up", () => {
    const op = (path: string) => doc.paths[path]?.get as Operation & { deprecated?: boolean };
    const v1 = [
      "/session/v1/device-sessions",
      "/session/v1/device-sessions/{session_id}",
      "/session/v1/devices/{device_id}/sessions",
    ];
    for (const path of v1) expect(op(path)?.deprecated, path).toBe(true);
    expect(op("/session/v2/sessions")?.deprecated).toBeFalsy();
    for (const path of ["/session/v2/sessions", "/session/v1/device-sessions"])
      expect(Object.keys(op(path)?.responses ?? {}), path).not.toContain("404");
    for (const path of [
      "/session/v2/users/{user_id}/sessions/{session_id}",
      "/session/v1/device-sessions/{session_id}",
      "/session/v1/devices/{device_id}/sessions",
      "/session/v1/payments/{payment_id}",
      "/location/v1/price-lists/{price_list_id}",
    ])
      expect(Object.keys(op(path)?.responses ?? {}), path).toEqual(
        expect.arrayContaining(["200", "400", "401", "404", "414", "500"]),
      );
  });

  it("documents the external-user routes: public, 429 and 504 where the operator is called back, no 401", () => {
    const op = (path: string) => doc.paths[`/external-users-auth/v1/${path}`]?.post;
    for (const path of ["sign-up", "sign-in", "refresh"]) {
      expect(op(path)?.security, path).toEqual([]);
      expect(Object.keys(op(path)?.responses ?? {}), path).not.toContain("401");
    }
    for (const path of ["sign-up", "sign-in"])
      expect(Object.keys(op(path)?.responses ?? {}), path).toEqual(
        expect.arrayContaining(["400", "413", "415", "429", "500", "504"]),
      );
    expect(Object.keys(op("sign-up")?.responses ?? {})).toContain("204");
    expect(Object.keys(op("sign-in")?.responses ?? {})).toContain("200");
    expect(Object.keys(op("refresh")?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "400", "500"]),
    );
  });

  // What each route can really answer (spec: Errors, status codes per endpoint group): no 404 on a list,
  // and no 403 on reads, which every client of an operator may make (another tenant's object is a 404).
  const TRANSPORT = ["400", "405", "408", "431", "500"];
  const STATUSES: Record<string, string[]> = {
    "get /location/v1/locations": ["200", "304", "401"],
    "get /location/v1/locations/{id}": ["200", "401", "404", "414"],
    "patch /location/v1/locations/{id}": ["204", "401", "403", "404", "413", "414", "415", "503"],
    "get /location/v1/public-areas": ["200", "401"],
    "get /location/v1/public-areas/{public_area_id}/locations": ["200", "404", "414"],
    "get /device/v1/locations/{location_id}/devices": ["200", "401", "414"],
    "get /device/v1/devices/{device_id}": ["200", "401", "404", "414"],
    "post /device/v1/devices/{device_id}/commands": [
      ...["200", "401", "403", "404", "409", "413", "414", "415", "422", "429", "503"],
    ],
    "get /device/v1/commands/{command_id}": ["200", "401", "404", "414"],
    // 403 to riders' tokens; 404 also while the photo is on its way.
    "get /device/v1/commands/{command_id}/photo": ["200", "401", "403", "404", "414"],
    "get /location/v1/locations/{id}/subscriptions": ["200", "401", "404", "414"],
    "get /location/v1/locations/{id}/descriptions": ["200", "401", "404", "414"],
    "get /location/v1/locations/{id}/external-devices": ["200", "401", "404", "414"],
    "get /location/v1/locations/{id}/rental-devices": ["200", "401", "404", "414"],
    "get /location/v1/locations/{id}/organizations": ["200", "401", "404", "414"],
    "get /location/v1/locations/{id}/audit": ["200", "401", "403", "404", "414"],
    // Whitelists: 403 to riders' tokens (and POST targets without SUPERADMIN), 504 on slow card and target reads.
    "get /whitelist/v1/locations/{location_id}/whitelists": ["200", "401", "403", "414"],
    "get /whitelist/v1/whitelists": ["200", "401", "403"],
    "get /whitelist/v1/whitelists/{whitelist_id}": ["200", "401", "403", "404", "414"],
    "get /whitelist/v1/whitelists/{whitelist_id}/entities": ["200", "401", "403", "404", "414", "504"],
    "post /whitelist/v1/whitelists/{whitelist_id}/entities": [
      "204",
      "401",
      "403",
      "404",
      "413",
      "414",
      "415",
    ],
    "get /whitelist/v1/whitelists/{whitelist_id}/targets": ["200", "401", "403", "404", "414", "504"],
    "post /whitelist/v1/whitelists/{whitelist_id}/targets": ["204", "401", "403", "404", "413", "414", "415"],
  };
  it.each(Object.entries(STATUSES))("declares exactly what %s can answer", (entry, statuses) => {
    const [method, path] = entry.split(" ") as [string, string];
    const declared = Object.keys(doc.paths[path]?.[method]?.responses ?? {}).sort();
    expect(declared).toEqual([...TRANSPORT, ...statuses].sort());
  });

  it("documents the photo as an image, not JSON", () => {
    const ok = doc.paths["/device/v1/commands/{command_id}/photo"]?.get?.responses["200"];
    expect(Object.keys(ok?.content ?? {}).sort()).toEqual(["image/jpeg", "image/png"]);
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
