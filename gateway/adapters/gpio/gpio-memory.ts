import { gpioLineSpec } from "../../../shared/protocol/gpio-lines.ts";
import type { GpioBank, GpioLine } from "../../ports.ts";

/** The memory bank's own handle: what a person or a test uses to play the inputs' hardware. */
export type MemoryGpioBank = GpioBank & {
  /** Sets a line's level from the hardware side (inputs included); watchers hear real changes only. */
  set(name: string, value: boolean): void;
};

/**
 * In-memory lines for development runs on a machine without GPIO hardware. Lines behave as onoff's do:
 * outputs start inactive, the gateway may not write an input, watchers hear only real changes.
 */
export function createMemoryGpioBank(names: string[]): MemoryGpioBank {
  const values = new Map<string, boolean>();
  const watchers = new Map<string, Set<(v: boolean) => void>>();
  for (const name of names) {
    values.set(name, false);
    watchers.set(name, new Set());
  }
  const known = (name: string) => {
    if (!values.has(name)) throw new Error(`no GPIO line named ${name}`);
    return name;
  };
  const set = (name: string, v: boolean) => {
    if (values.get(known(name)) === v) return;
    values.set(name, v);
    for (const w of [...(watchers.get(name) ?? [])]) w(v);
  };
  return {
    line(name): GpioLine {
      known(name);
      const fns = watchers.get(name) ?? new Set();
      return {
        read: () => values.get(name) ?? false,
        write(v) {
          if (gpioLineSpec(name)?.direction === "in") throw new Error(`GPIO line ${name} is an input`);
          set(name, v);
        },
        watch(fn) {
          // Each watch is its own subscription, even for the same function.
          const own = (v: boolean) => fn(v);
          fns.add(own);
          return () => fns.delete(own);
        },
      };
    },
    set,
    close() {
      for (const fns of watchers.values()) fns.clear();
    },
  };
}
