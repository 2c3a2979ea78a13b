import { describe, expect, it } from "vitest";
import { createDeviceTurns } from "./device-turns.ts";

const tick = () => new Promise((r) => setImmediate(r));

describe("device turns", () => {
  it("runs one device's work one piece at a time, in order, and other devices' meanwhile", async () => {
    const turns = createDeviceTurns();
    const log: string[] = [];
    let release = () => {};
    const first = turns.run("locker-1", async () => {
      log.push("command starts");
      await new Promise<void>((r) => (release = r));
      log.push("command ends");
    });
    const second = turns.run("locker-1", async () => void log.push("tap"));
    const other = turns.run("locker-2", async () => void log.push("other locker"));
    await tick();
    expect(log).toEqual(["command starts", "other locker"]);
    release();
    await Promise.all([first, second, other]);
    expect(log).toEqual(["command starts", "other locker", "command ends", "tap"]);
  });

  it("a piece that fails fails alone: the next one still runs", async () => {
    const turns = createDeviceTurns();
    const failed = turns.run("locker-1", () => Promise.reject(new Error("bus gone")));
    await expect(failed).rejects.toThrow("bus gone");
    await expect(turns.run("locker-1", async () => "ran")).resolves.toBe("ran");
  });
});
