import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx } from "../support/fixture-site.ts";
import { type RawResponse, rawExchange } from "../support/raw-http.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SPEC_FIELDS = ["correlation_id", "error_code", "error_message", "status_code"];

/** The spec's standard error body: exactly the four fields, the correlation id equal to the header. */
function expectSpecError(res: LightMyRequestResponse | RawResponse, status: number, errorCode: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  const body = res.json() as Record<string, unknown> & { error_message: string; correlation_id: string };
  expect(Object.keys(body).sort()).toEqual(SPEC_FIELDS);
  expect(body.status_code).toBe(status);
  expect(body.error_code).toBe(errorCode);
  expect(typeof body.error_message).toBe("string");
  expect(body.error_message.length).toBeGreaterThan(0);
  expect(typeof body.correlation_id).toBe("string");
  expect(body.correlation_id.length).toBeGreaterThan(0);
  expect(body.correlation_id).toBe(res.headers["x-correlation-id"]);
  return body;
}

const locationUrl = () => `/location/v1/locations/${fx.location("L1")}`;

describe("error paths", () => {
  let h: CloudHarness;
  beforeAll(async () => {
    h = await startCloudHarness();
  });
  afterAll(() => h.close());

  describe("unknown routes and methods", () => {
    it("answers an unknown route with 404 and the spec error body, without a token", async () => {
      const body = expectSpecError(
        await h.app.inject({ method: "GET", url: "/location/v1/nowhere?x=1" }),
        404,
        "ERRORS.NOT_FOUND",
      );
      expect(body.error_message).toContain("/location/v1/nowhere");
      expect(body.error_message).not.toContain("x=1");
    });

    it("answers an unknown route with 404 for an authenticated caller too", async () => {
      expectSpecError(
        await h.call(CLIENTS.admin, { method: "GET", url: "/device/v2/devices" }),
        404,
        "ERRORS.NOT_FOUND",
      );
    });

    it("answers a wrong method on a location with 405 and an Allow header listing GET and PATCH", async () => {
      const res = await h.app.inject({ method: "DELETE", url: locationUrl() });
      expectSpecError(res, 405, "ERRORS.METHOD_NOT_ALLOWED");
      expect(String(res.headers.allow).split(/,\s*/).sort()).toEqual(["GET", "PATCH"]);
    });

    it("answers PUT on the commands route with 405 and Allow: POST", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "PUT",
        url: `/device/v1/devices/${fx.device("L1", "1")}/commands`,
        payload: { command: "lock" },
      });
      expectSpecError(res, 405, "ERRORS.METHOD_NOT_ALLOWED");
      expect(res.headers.allow).toBe("POST");
      expect(h.gateways.commands).toEqual([]);
    });

    it("answers POST on the locations list with 405 and Allow: GET", async () => {
      const res = await h.app.inject({ method: "POST", url: "/location/v1/locations", payload: {} });
      expectSpecError(res, 405, "ERRORS.METHOD_NOT_ALLOWED");
      expect(res.headers.allow).toBe("GET");
    });

    const unreadable = [
      ["not JSON", '{"unterminated'],
      ["over the size limit", JSON.stringify({ x: "x".repeat(70 * 1024) })],
    ] as const;

    it.each(unreadable)("answers an unknown route with 404 when its body is %s", async (_what, payload) => {
      const res = await h.app.inject({
        method: "POST",
        url: "/device/v2/commands",
        headers: { "content-type": "application/json" },
        payload,
      });
      expectSpecError(res, 404, "ERRORS.NOT_FOUND");
    });

    it.each(unreadable)(
      "answers a wrong method with 405 and Allow when its body is %s",
      async (_what, payload) => {
        const res = await h.call(CLIENTS.admin, {
          method: "PUT",
          url: locationUrl(),
          headers: { "content-type": "application/json" },
          payload,
        });
        expectSpecError(res, 405, "ERRORS.METHOD_NOT_ALLOWED");
        expect(String(res.headers.allow).split(/,\s*/).sort()).toEqual(["GET", "PATCH"]);
      },
    );
  });

  describe("U+0000, which PostgreSQL cannot hold in text", () => {
    it.each([
      [
        "a path parameter",
        "GET",
        "/location/v1/public-areas/city%00a/locations",
        undefined,
        "params.public_area_id",
      ],
      ["a query value", "GET", "/location/v1/locations?tag=a%00", undefined, "querystring.tag"],
      ["a body string", "PATCH", locationUrl(), { label: "Lockers\u0000one" }, "body.label"],
      ["a body key", "PATCH", locationUrl(), { "label\u0000": "x" }, "body.label\u0000"],
    ] as const)(
      "refuses it in %s with 400 naming the field, on either store",
      async (_what, method, url, payload, field) => {
        const res = await h.call(CLIENTS.admin, { method, url, ...(payload ? { payload } : {}) });
        const body = expectSpecError(res, 400, "ERRORS.VALIDATION_FAILED");
        expect(body.error_message).toContain(field);
      },
    );

    it("changes nothing when a PATCH is refused for it", async () => {
      await h.call(CLIENTS.admin, { method: "PATCH", url: locationUrl(), payload: { label: "a\u0000b" } });
      const detail = await h.call(CLIENTS.admin, { method: "GET", url: locationUrl() });
      expect(detail.json().label).toBe("Lockers one");
    });
  });

  describe("request bodies", () => {
    it("answers a PATCH body over 64 KiB with 413 and the spec error body, changing nothing", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "PATCH",
        url: locationUrl(),
        headers: { "content-type": "application/json" },
        payload: JSON.stringify({ label: "x".repeat(65 * 1024) }),
      });
      expectSpecError(res, 413, "ERRORS.PAYLOAD_TOO_LARGE");
      const detail = await h.call(CLIENTS.admin, { method: "GET", url: locationUrl() });
      expect(detail.json().label).toBe("Lockers one");
    });

    it("accepts a PATCH body just under the limit as far as size goes", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "PATCH",
        url: locationUrl(),
        headers: { "content-type": "application/json" },
        payload: JSON.stringify({ no_such_field: "x".repeat(60 * 1024) }),
      });
      // Not a 413: the size passes, and the unknown field is a validation error.
      expectSpecError(res, 400, "ERRORS.VALIDATION_FAILED");
    });

    it("answers a PATCH with content type text/plain with 415 and the spec error body", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "PATCH",
        url: locationUrl(),
        headers: { "content-type": "text/plain" },
        payload: '{"label":"plain"}',
      });
      expectSpecError(res, 415, "ERRORS.UNSUPPORTED_MEDIA_TYPE");
    });

    it("answers malformed JSON with 400 ERRORS.VALIDATION_FAILED and the spec error body", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "PATCH",
        url: locationUrl(),
        headers: { "content-type": "application/json" },
        payload: '{"label": "unterminated',
      });
      const body = expectSpecError(res, 400, "ERRORS.VALIDATION_FAILED");
      expect(body.error_message).toMatch(/json/i);
    });

    it("names the offending field when validation fails", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "PATCH",
        url: locationUrl(),
        payload: { latitude: "x" },
      });
      const body = expectSpecError(res, 400, "ERRORS.VALIDATION_FAILED");
      expect(body.error_message).toContain("latitude");
    });

    it("names an unknown or read-only body field when validation fails", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "PATCH",
        url: locationUrl(),
        payload: { label: "fine", connection: "ONLINE" },
      });
      const body = expectSpecError(res, 400, "ERRORS.VALIDATION_FAILED");
      expect(body.error_message).toContain("body.connection");
      expect(body.error_message).not.toContain("body.label");
    });

    it("names an invalid query parameter when validation fails", async () => {
      const res = await h.call(CLIENTS.admin, { method: "GET", url: "/location/v1/locations?lat_lng=north" });
      const body = expectSpecError(res, 400, "ERRORS.VALIDATION_FAILED");
      expect(body.error_message).toContain("lat_lng");
    });

    it("answers a malformed location id like an unknown one: 404, as the location table says", async () => {
      const res = await h.call(CLIENTS.admin, { method: "GET", url: "/location/v1/locations/not-a-uuid" });
      const body = expectSpecError(res, 404, "ERRORS.NOT_FOUND");
      expect(body.error_message).toContain("not-a-uuid");
    });
  });

  describe("correlation ids (U4)", () => {
    it("sends the correlation id as a response header equal to the body's correlation_id", async () => {
      const res = await h.app.inject({ method: "GET", url: "/nowhere" });
      const body = expectSpecError(res, 404, "ERRORS.NOT_FOUND");
      expect(body.correlation_id).toMatch(UUID);
    });

    it("generates a different correlation id for each request", async () => {
      const a = await h.app.inject({ method: "GET", url: "/nowhere" });
      const b = await h.app.inject({ method: "GET", url: "/nowhere" });
      expect(a.headers["x-correlation-id"]).not.toBe(b.headers["x-correlation-id"]);
    });

    it("sends the correlation id header on successful responses too", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "GET",
        url: "/location/v1/locations",
        headers: { "x-correlation-id": "ok-req-1" },
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers["x-correlation-id"]).toBe("ok-req-1");
    });

    it("echoes a caller-supplied x-correlation-id in the header and the body", async () => {
      const res = await h.app.inject({
        method: "GET",
        url: "/location/v1/locations",
        headers: { "x-correlation-id": "abc-123" },
      });
      const body = expectSpecError(res, 401, "ERRORS.UNAUTHORIZED");
      expect(res.headers["x-correlation-id"]).toBe("abc-123");
      expect(body.correlation_id).toBe("abc-123");
    });

    it.each([
      ["300 characters long", "a".repeat(300)],
      ["containing spaces", "abc 123"],
      ["containing markup", "<script>alert(1)</script>"],
      ["containing a newline escape", "abc\\n123"],
    ])("replaces a caller-supplied correlation id %s with a generated one", async (_what, given) => {
      const res = await h.app.inject({
        method: "GET",
        url: "/location/v1/nowhere",
        headers: { "x-correlation-id": given },
      });
      const body = expectSpecError(res, 404, "ERRORS.NOT_FOUND");
      expect(body.correlation_id).not.toBe(given);
      expect(body.correlation_id).toMatch(UUID);
    });

    it("echoes the caller's correlation id on token endpoint errors", async () => {
      const res = await h.app.inject({
        method: "POST",
        url: "/oauth2/token",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-correlation-id": "tok-1" },
        payload: "grant_type=password",
      });
      expect(res.statusCode).toBe(400);
      expect(res.headers["x-correlation-id"]).toBe("tok-1");
      expect(res.json().correlation_id).toBe("tok-1");
    });
  });

  describe("errors raised before routing", () => {
    it("answers a path with a malformed percent-encoding with 400 ERRORS.BAD_REQUEST in the spec body", async () => {
      const body = expectSpecError(
        await h.app.inject({ method: "GET", url: "/device/v1/devices/%zz" }),
        400,
        "ERRORS.BAD_REQUEST",
      );
      expect(body.correlation_id).toMatch(UUID);
      expect(body.error_message).not.toContain("%zz");
    });

    it("keeps a caller's correlation id on a malformed URL", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "GET",
        url: "/location/v1/locations/%E0%A4%A",
        headers: { "x-correlation-id": "bad-url-1" },
      });
      expect(expectSpecError(res, 400, "ERRORS.BAD_REQUEST").correlation_id).toBe("bad-url-1");
    });

    it.each([
      ["GET device", "GET", "/device/v1/devices/"],
      ["PATCH location", "PATCH", "/location/v1/locations/"],
      ["GET public-area GeoJSON", "GET", "/location/v1/public-areas/"],
    ] as const)(
      "answers %s with a path parameter over 100 characters with 414 ERRORS.URI_TOO_LONG",
      async (_, method, prefix) => {
        const res = await h.call(CLIENTS.admin, { method, url: `${prefix}${"a".repeat(101)}` });
        expectSpecError(res, 414, "ERRORS.URI_TOO_LONG");
      },
    );

    it("still routes a path parameter of exactly 100 characters (an id that names nothing: 404)", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "GET",
        url: `/device/v1/devices/${"a".repeat(100)}`,
      });
      expectSpecError(res, 404, "ERRORS.NOT_FOUND");
    });
  });

  describe("UUIDs in paths match whatever their letter case", () => {
    const upper = (id: string) => id.toUpperCase();

    it("finds a device by its upper-case id and answers with the canonical lower-case id", async () => {
      const id = fx.device("L1", "1");
      const res = await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/devices/${upper(id)}` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id, uri: `/device/v1/devices/${id}` });
    });

    it("finds a location, and its devices, by a mixed-case id", async () => {
      const id = fx.location("L1");
      const mixed = id.replace(/[a-f]/g, (c, i: number) => (i % 2 ? c.toUpperCase() : c));
      expect(mixed).not.toBe(id);
      const detail = await h.call(CLIENTS.admin, { method: "GET", url: `/location/v1/locations/${mixed}` });
      expect(detail.statusCode, detail.body).toBe(200);
      expect(detail.json().id).toBe(id);
      const list = await h.call(CLIENTS.admin, {
        method: "GET",
        url: `/device/v1/locations/${mixed}/devices`,
      });
      expect(list.statusCode, list.body).toBe(200);
      expect(list.json().data.length).toBeGreaterThan(0);
      expect(list.json().uri).toBe(`/device/v1/locations/${id}/devices`);
    });

    it("patches a location addressed by its upper-case id", async () => {
      const id = fx.location("D1");
      const res = await h.call(CLIENTS.admin, {
        method: "PATCH",
        url: `/location/v1/locations/${upper(id)}`,
        payload: { city: "Leiden" },
      });
      expect(res.statusCode, res.body).toBe(204);
      const after = await h.call(CLIENTS.admin, { method: "GET", url: `/location/v1/locations/${id}` });
      expect(after.json().city).toBe("Leiden");
    });

    it("sends a command to an upper-case device id and reads it back by its upper-case id", async () => {
      const device = fx.device("L1", "2");
      const sent = await h.call(CLIENTS.admin, {
        method: "POST",
        url: `/device/v1/devices/${upper(device)}/commands`,
        payload: { command: "sync-device" },
      });
      expect(sent.statusCode, sent.body).toBe(200);
      expect(sent.json().device.id).toBe(device);
      const commandId = sent.json().id as string;
      const read = await h.call(CLIENTS.admin, {
        method: "GET",
        url: `/device/v1/commands/${upper(commandId)}`,
      });
      expect(read.statusCode, read.body).toBe(200);
      expect(read.json().id).toBe(commandId);
    });

    it("still answers 404 for an unknown upper-case id, exactly like a lower-case one", async () => {
      const unknown = "0000AAAA-0000-4000-8000-00000000BBBB";
      const res = await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/devices/${unknown}` });
      expect(expectSpecError(res, 404, "ERRORS.NOT_FOUND").error_message).toContain(unknown.toLowerCase());
    });
  });
});

describe("internal errors (S32)", () => {
  let h: CloudHarness;
  let token: string;
  beforeAll(async () => {
    h = await startCloudHarness();
    token = await h.token(CLIENTS.admin);
    await h.db.destroy();
  });
  afterAll(() => h.close());

  const bearer = () => ({ authorization: `Bearer ${token}` });

  it.each([
    ["GET locations", "GET", "/location/v1/locations"],
    ["GET device", "GET", `/device/v1/devices/${fx.device("L1", "1")}`],
    ["GET public-area GeoJSON", "GET", "/location/v1/public-areas/city-a/locations"],
  ] as const)(
    "answers %s with a dead database with 500 and only the spec fields",
    async (_name, method, url) => {
      const res = await h.app.inject({
        method,
        url,
        headers: { ...bearer(), "x-correlation-id": "db-down-1" },
      });
      const body = expectSpecError(res, 500, "ERRORS.INTERNAL");
      expect(body.correlation_id).toBe("db-down-1");
      expect(res.body).not.toMatch(
        /stack|select|from "|sqlite|postgres|kysely|destroyed|driver|\bat\s+\S+\s+\(/i,
      );
    },
  );

  it("generates a correlation id for a 500 that matches the header", async () => {
    const res = await h.app.inject({ method: "GET", url: "/location/v1/locations", headers: bearer() });
    const body = expectSpecError(res, 500, "ERRORS.INTERNAL");
    expect(body.correlation_id).toMatch(UUID);
  });

  it("answers a token request with a dead database with 500 and issues no token", async () => {
    const res = await h.app.inject({
      method: "POST",
      url: "/oauth2/token",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: "grant_type=client_credentials&client_id=a-admin&client_secret=fixture-secret-123",
    });
    expect(res.statusCode).toBe(500);
    const body = res.json();
    expect(body).toMatchObject({ status_code: 500, correlation_id: res.headers["x-correlation-id"] });
    expect(body).not.toHaveProperty("access_token");
    expect(res.body).not.toMatch(/stack|select|sqlite|postgres|kysely|destroyed|driver/i);
  });

  it("still answers an unknown route with 404 and the spec body while the database is down", async () => {
    expectSpecError(await h.app.inject({ method: "GET", url: "/no/such/route" }), 404, "ERRORS.NOT_FOUND");
  });
});

/** What Node's HTTP server rejects before Fastify runs can only be sent over a real socket. */
describe("errors answered on the raw connection", () => {
  const TIMEOUT_MS = 500;
  let h: CloudHarness;
  let port: number;
  let token: string;
  beforeAll(async () => {
    h = await startCloudHarness({ requestTimeoutMs: TIMEOUT_MS });
    token = await h.token(CLIENTS.admin);
    await h.app.listen({ port: 0, host: "127.0.0.1" });
    const address = h.app.server.address();
    port = typeof address === "object" && address ? address.port : 0;
  });
  afterAll(() => h.close());

  /** The envelope with a generated correlation id (also in the header), and the connection closed. */
  function expectConnectionError(res: RawResponse, status: number, errorCode: string) {
    const body = expectSpecError(res, status, errorCode);
    expect(body.correlation_id).toMatch(UUID);
    expect(res.headers.connection).toBe("close");
    expect(Number(res.headers["content-length"])).toBe(Buffer.byteLength(res.body));
    return body;
  }

  it("answers a malformed header line with 400 ERRORS.BAD_REQUEST in the spec body", async () => {
    const res = await rawExchange(port, (s) => {
      s.write("GET /livez HTTP/1.1\r\nHost: a\r\nThis is not a header\r\n\r\n");
    });
    expectConnectionError(res, 400, "ERRORS.BAD_REQUEST");
  });

  it("answers a request line that is not HTTP with 400 ERRORS.BAD_REQUEST", async () => {
    const res = await rawExchange(port, (s) => s.write("HELLO THERE\r\n\r\n"));
    expectConnectionError(res, 400, "ERRORS.BAD_REQUEST");
  });

  it("answers header fields over 16 KiB with 431 ERRORS.HEADERS_TOO_LARGE", async () => {
    const res = await rawExchange(port, (s) => {
      s.write(`GET /livez HTTP/1.1\r\nHost: a\r\nX-Big: ${"a".repeat(20 * 1024)}\r\n\r\n`);
    });
    expectConnectionError(res, 431, "ERRORS.HEADERS_TOO_LARGE");
  });

  it("gives two malformed requests different correlation ids", async () => {
    const bad = (s: import("node:net").Socket) => s.write("GET / HTTP/1.1\r\nBroken\r\n\r\n");
    const a = expectConnectionError(await rawExchange(port, bad), 400, "ERRORS.BAD_REQUEST");
    const b = expectConnectionError(await rawExchange(port, bad), 400, "ERRORS.BAD_REQUEST");
    expect(a.correlation_id).not.toBe(b.correlation_id);
  });

  /** An authenticated PATCH, so the server waits for its body. */
  const patchHead = (length: number) =>
    `PATCH /location/v1/locations/${fx.location("L1")} HTTP/1.1\r\nHost: a\r\n` +
    `Authorization: Bearer ${token}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  it("answers a body that stalls with 408 ERRORS.REQUEST_TIMEOUT once the receive timeout has passed", async () => {
    const res = await rawExchange(port, (s) => s.write(`${patchHead(40)}{"label":`));
    expectConnectionError(res, 408, "ERRORS.REQUEST_TIMEOUT");
    expect(res.elapsedMs).toBeGreaterThanOrEqual(TIMEOUT_MS * 0.8);
  });

  it("answers a body that trickles in byte by byte with 408 as well", async () => {
    const res = await rawExchange(port, (s) => {
      s.write(patchHead(1000));
      const drip = setInterval(() => {
        if (s.destroyed || s.writableEnded) clearInterval(drip);
        else s.write(" ");
      }, 50);
      s.on("close", () => clearInterval(drip));
    });
    expectConnectionError(res, 408, "ERRORS.REQUEST_TIMEOUT");
    // Nothing of the half-received body was applied.
    const after = await h.call(CLIENTS.admin, {
      method: "GET",
      url: `/location/v1/locations/${fx.location("L1")}`,
    });
    expect(after.json().label).toBe("Lockers one");
  });

  it("answers an HTTP/1.1 request without a Host header with 400 ERRORS.BAD_REQUEST in the spec body", async () => {
    const res = await rawExchange(port, (s) =>
      s.write(
        "GET /location/v1/locations HTTP/1.1\r\nX-Correlation-Id: no-host-1\r\nConnection: close\r\n\r\n",
      ),
    );
    const body = expectSpecError(res, 400, "ERRORS.BAD_REQUEST");
    expect(body.correlation_id).toBe("no-host-1");
    expect(body.error_message).toContain("Host");
  });

  it("accepts an HTTP/1.0 request without a Host header (it needs none)", async () => {
    const res = await rawExchange(port, (s) => s.write("GET /livez HTTP/1.0\r\n\r\n"));
    expect(res.statusCode).toBe(200);
  });

  it("answers a path out of the interactive docs' files with 403 in the spec body, not 500", async () => {
    for (const path of ["/docs/static/../../package.json", "/docs/static/%2e%2e/%2e%2e/package.json"]) {
      const res = await rawExchange(port, (s) =>
        s.write(`GET ${path} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`),
      );
      expectSpecError(res, 403, "ERRORS.FORBIDDEN");
      expect(res.body).not.toContain("bike-parking-platform");
    }
  });

  it("still serves a complete request over the same listener", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/location/v1/locations`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
  });
});
