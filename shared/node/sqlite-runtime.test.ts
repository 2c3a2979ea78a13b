import { describe, expect, it } from "vitest";
import { assertSqliteRuntime } from "./sqlite-runtime.ts";

describe("the SQLite runtime check", () => {
  it("passes on the Node this suite runs on with the installed driver (CI runs it on every supported Node)", () => {
    expect(() => assertSqliteRuntime()).not.toThrow();
  });

  it("passes on Node-API 10 (Node 22.14+, 24) and later", () => {
    for (const versions of [
      { node: "22.14.0", napi: "10" },
      { node: "24.21.0", napi: "10" },
      { node: "26.0.0", napi: "11" },
    ]) {
      expect(() => assertSqliteRuntime(versions, "13.2.0"), versions.node).not.toThrow();
    }
  });

  it("names what is needed and what runs on an older Node, instead of letting the driver crash", () => {
    for (const { node, napi } of [
      { node: "20.20.2", napi: "9" },
      { node: "22.13.1", napi: "9" },
    ]) {
      expect(() => assertSqliteRuntime({ node, napi }, "13.2.0")).toThrow(
        `SQLite (better-sqlite3 13.2.0) needs Node.js 22.14 or later (Node-API 10); this is Node.js ${node} (Node-API ${napi})`,
      );
    }
    expect(() => assertSqliteRuntime({ node: "16.0.0" }, "13.2.0")).toThrow(
      "this is Node.js 16.0.0 (Node-API none)",
    );
  });

  it("leaves a driver from before 13 alone: that one is built for the Node it runs on", () => {
    expect(() => assertSqliteRuntime({ node: "20.20.2", napi: "9" }, "12.11.1")).not.toThrow();
  });
});
