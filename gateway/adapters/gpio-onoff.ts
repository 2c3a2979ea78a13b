import { Gpio } from "onoff";
import { GPIO_LINE_KINDS, type GpioLineKind } from "../../shared/protocol/gpio-lines.ts";
import type { GpioBank, GpioLine } from "../ports.ts";

/**
 * Real GPIO through onoff (sysfs). A line's kind comes from its name ("door_strike:north" → door_strike),
 * which sets its direction and active level (shared/protocol/gpio-lines.ts).
 */
export function createOnoffGpioBank(lines: Record<string, number>): GpioBank {
  const opened = new Map<string, { gpio: Gpio; line: GpioLine }>();
  for (const [name, pin] of Object.entries(lines)) {
    const kind = name.split(":")[0] as GpioLineKind;
    const spec = GPIO_LINE_KINDS[kind];
    if (!spec) throw new Error(`GPIO line ${name}: unknown kind ${kind}`);
    const gpio =
      spec.direction === "out"
        ? new Gpio(pin, "low", "none", { activeLow: spec.activeLow })
        : new Gpio(pin, "in", "both", { activeLow: spec.activeLow, debounceTimeout: 20 });
    opened.set(name, {
      gpio,
      line: {
        read: () => gpio.readSync() === 1,
        write: (v) => gpio.writeSync(v ? 1 : 0),
        watch(fn) {
          const cb = (err: Error | null | undefined, value: 0 | 1) => {
            if (!err) fn(value === 1);
          };
          gpio.watch(cb);
          return () => gpio.unwatch(cb);
        },
      },
    });
  }
  return {
    line(name) {
      const l = opened.get(name);
      if (!l) throw new Error(`no GPIO line named ${name}`);
      return l.line;
    },
    close() {
      for (const { gpio } of opened.values()) gpio.unexport();
    },
  };
}
