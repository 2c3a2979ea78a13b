import type { GpioBank, GpioLine } from "../ports.ts";

/** In-memory lines for development runs on a machine without GPIO hardware. */
export function createMemoryGpioBank(names: string[]): GpioBank {
  const lines = new Map<string, GpioLine>();
  for (const name of names) {
    let value = false;
    const watchers = new Set<(v: boolean) => void>();
    lines.set(name, {
      read: () => value,
      write(v) {
        if (v === value) return;
        value = v;
        for (const w of watchers) w(v);
      },
      watch(fn) {
        watchers.add(fn);
        return () => watchers.delete(fn);
      },
    });
  }
  return {
    line(name) {
      const l = lines.get(name);
      if (!l) throw new Error(`no GPIO line named ${name}`);
      return l;
    },
    close() {},
  };
}
