import { describe, expect, it } from "vitest";
import { COMMAND_NAMES } from "../../shared/domain/device-types.ts";
import type { Principal } from "../auth/principal.ts";
import { accessSubject } from "./location-access.ts";

const rider: Principal = { kind: "user", id: "rider-1", operatorId: "op", permissions: new Set() };
const client: Principal = {
  kind: "client",
  id: "backend",
  operatorId: "op",
  permissions: new Set(["ACT_ON_BEHALF_OF"]),
};

describe("whose membership a command needs", () => {
  it("only lock and book are checked", () => {
    for (const name of COMMAND_NAMES) {
      const checked = accessSubject(rider, { command: name }) !== null;
      expect(checked, name).toBe(name === "lock" || name === "book");
    }
  });

  it("a rider's own token checks the rider; a lock's user_id checks that user", () => {
    expect(accessSubject(rider, { command: "lock" })).toBe("rider-1");
    expect(accessSubject(rider, { command: "book" })).toBe("rider-1");
    expect(accessSubject(rider, { command: "lock", user_id: "rider-1" })).toBe("rider-1");
    expect(accessSubject(client, { command: "lock", user_id: "rider-2" })).toBe("rider-2");
  });

  it("an integrator's back end acting for nobody is not checked", () => {
    expect(accessSubject(client, { command: "lock" })).toBeNull();
    expect(accessSubject(client, { command: "book" })).toBeNull();
  });
});
