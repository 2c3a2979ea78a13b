import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { installErrorHandling, STORE_FULL_MESSAGE } from "./error-handler.ts";

/** An app whose one route fails as a store does when its disk is full, or with any other error. */
function appThrowing(err: Error) {
  const app = Fastify();
  installErrorHandling(app);
  app.post("/things", () => Promise.reject(err));
  return app;
}

describe("a store whose disk is full", () => {
  it.each([
    ["SQLite", "SQLITE_FULL"],
    ["PostgreSQL", "53100"],
  ])("%s: the request is refused with 503 and Retry-After, in the error body format", async (_, code) => {
    const app = appThrowing(Object.assign(new Error("database or disk is full"), { code }));
    const res = await app.inject({ method: "POST", url: "/things", payload: {} });
    expect(res.statusCode).toBe(503);
    expect(res.headers["retry-after"]).toBe("30");
    expect(res.json()).toMatchObject({
      error_code: "ERRORS.SERVICE_UNAVAILABLE",
      error_message: STORE_FULL_MESSAGE,
      status_code: 503,
    });
  });

  it("any other failure stays a 500 that tells nothing internal", async () => {
    const app = appThrowing(Object.assign(new Error("secret detail"), { code: "SQLITE_CORRUPT" }));
    const res = await app.inject({ method: "POST", url: "/things", payload: {} });
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain("secret detail");
  });
});
