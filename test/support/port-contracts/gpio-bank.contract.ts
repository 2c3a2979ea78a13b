import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { GpioBank } from "../../../gateway/ports.ts";
import { Signal } from "../signal.ts";

/** The lines every implementation is set up with: an output, and two inputs (one of them active-low). */
export const CONTRACT_LINES = {
  "door_strike:north": 17,
  "door_contact:north": 27,
  tamper: 22,
} as const;

/** How a bank under test is made; its hardware starts at rest (every line inactive). */
export type GpioRig = {
  /** A bank on CONTRACT_LINES; called again after close() for the lines' next owner. */
  open(): GpioBank;
  /** The hardware changes an input line (logical value: true = active). */
  drive(name: keyof typeof CONTRACT_LINES, active: boolean): void;
  dispose(): void;
};

/** Records what one watcher heard. */
function watcher() {
  const heard: boolean[] = [];
  const signal = new Signal();
  return {
    heard,
    fn: (v: boolean) => {
      heard.push(v);
      signal.notify();
    },
    /** Resolves once `n` changes have been heard. */
    heardCount: (n: number) => signal.until(() => heard.length >= n),
  };
}

/**
 * The GPIO port's contract (STYLE rule 7), what GpioDoors relies on, run against every bank: logical
 * values whatever the electrical level, outputs start inactive and read back what was written, inputs are
 * read-only and report each change to their watchers until unsubscribed, and close() lets go of the lines.
 */
export function gpioBankContract(name: string, makeRig: () => Promise<GpioRig> | GpioRig): void {
  describe(`GPIO bank contract: ${name}`, () => {
    let rig: GpioRig;
    let bank: GpioBank;

    beforeEach(async () => {
      rig = await makeRig();
      bank = rig.open();
    });

    afterEach(() => {
      bank.close();
      rig.dispose();
    });

    it("starts an output inactive and reads back what the gateway writes", () => {
      const strike = bank.line("door_strike:north");
      expect(strike.read()).toBe(false);
      strike.write(true);
      expect(strike.read()).toBe(true);
      strike.write(false);
      expect(strike.read()).toBe(false);
    });

    it("reads an input as the hardware drives it, in logical values (active-low included)", async () => {
      const contact = bank.line("door_contact:north");
      const tamper = bank.line("tamper");
      const c = watcher();
      const t = watcher();
      contact.watch(c.fn);
      tamper.watch(t.fn);
      rig.drive("door_contact:north", true); // the door shut
      rig.drive("tamper", true); // the case opened
      await c.heardCount(1);
      await t.heardCount(1);
      expect([contact.read(), tamper.read()]).toEqual([true, true]);
      expect([c.heard, t.heard]).toEqual([[true], [true]]);
    });

    it("reports every change of an input to each watcher, and nothing after it unsubscribes", async () => {
      const contact = bank.line("door_contact:north");
      const leaving = watcher();
      const staying = watcher();
      const unwatch = contact.watch(leaving.fn);
      contact.watch(staying.fn);
      rig.drive("door_contact:north", true);
      await staying.heardCount(1);
      await leaving.heardCount(1);
      unwatch();
      rig.drive("door_contact:north", false);
      await staying.heardCount(2);
      expect(staying.heard).toEqual([true, false]);
      expect(leaving.heard).toEqual([true]);
    });

    it("refuses a write to an input and a line it was not configured with", () => {
      expect(() => bank.line("door_contact:north").write(true)).toThrow(/input/);
      expect(() => bank.line("door_strike:south")).toThrow(/door_strike:south/);
    });

    it("after close() the old watchers hear nothing; the lines' next owner does", async () => {
      const old = watcher();
      bank.line("door_contact:north").watch(old.fn);
      bank.close();
      bank = rig.open();
      const next = watcher();
      bank.line("door_contact:north").watch(next.fn);
      rig.drive("door_contact:north", true);
      await next.heardCount(1);
      expect(old.heard).toEqual([]);
    });
  });
}
