import { describe, expect, it } from "vitest";
import { recoverInterrupted } from "./recover-interrupted.ts";

const full = () => {
  throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
};

function logRecorder() {
  const lines: [string, string][] = [];
  const log = {
    warn: (_o: object, msg: string) => lines.push(["warn", msg]),
    error: (_o: object, msg: string) => lines.push(["error", msg]),
  };
  return { lines, log: log as never };
}

describe("recovering what the last stop interrupted", () => {
  it("on a full state disk, defers the report and lets the daemon start", () => {
    const { lines, log } = logRecorder();
    const commands = { recovered: 0 };
    expect(() =>
      recoverInterrupted(
        { recoverInterrupted: full },
        { recoverInterrupted: () => ++commands.recovered },
        log,
      ),
    ).not.toThrow();
    // The commands are still tried: each part fails or succeeds on its own writes.
    expect(commands.recovered).toBe(1);
    expect(lines).toEqual([
      ["error", "taps interrupted by the last stop: not reported yet, the state store is full"],
      ["warn", "commands interrupted by the last stop were reported as failed"],
    ]);
  });

  it("any other failure still ends the start", () => {
    const { log } = logRecorder();
    const broken = () => {
      throw Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" });
    };
    expect(() =>
      recoverInterrupted({ recoverInterrupted: () => 0 }, { recoverInterrupted: broken }, log),
    ).toThrow("disk I/O error");
  });
});
