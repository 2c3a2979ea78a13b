import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { catchStopSignals, type StopSignal } from "./stop-signals.ts";

function harness() {
  const source = new EventEmitter();
  const exits: number[] = [];
  const stops: StopSignal[] = [];
  const signals = catchStopSignals({ source, exit: (code) => void exits.push(code) });
  const stop = async (signal: StopSignal) => void stops.push(signal);
  return { source, exits, stops, signals, stop };
}

describe("catchStopSignals", () => {
  it("listens for SIGTERM and SIGINT from the start, before the service has a stop to run", () => {
    const h = harness();
    expect(h.source.listenerCount("SIGTERM")).toBe(1);
    expect(h.source.listenerCount("SIGINT")).toBe(1);
  });

  it("stops a started service on the signal it received", () => {
    const h = harness();
    expect(h.signals.stopWith(h.stop)).toBe(false);
    expect(h.stops).toEqual([]);
    h.source.emit("SIGTERM");
    expect(h.stops).toEqual(["SIGTERM"]);
    expect(h.exits).toEqual([]);
  });

  it("keeps a signal that came while the service started and stops it once started, unannounced", () => {
    const h = harness();
    h.source.emit("SIGINT");
    expect(h.stops).toEqual([]);
    expect(h.signals.stopWith(h.stop)).toBe(true);
    expect(h.stops).toEqual(["SIGINT"]);
  });

  it("ends the process at once on a second signal, with 128 + its number", () => {
    const h = harness();
    h.signals.stopWith(h.stop);
    h.source.emit("SIGINT");
    h.source.emit("SIGINT");
    expect(h.stops).toEqual(["SIGINT"]);
    expect(h.exits).toEqual([130]);
    h.source.emit("SIGTERM");
    expect(h.exits).toEqual([130, 143]);
  });

  it("ends a start that a signal is already waiting on at a second one", () => {
    const h = harness();
    h.source.emit("SIGTERM");
    h.source.emit("SIGTERM");
    expect(h.exits).toEqual([143]);
  });
});
