import { Gpio } from "onoff";
import { GPIO_LINE_KINDS, parseGpioLineName } from "../../../shared/protocol/gpio-lines.ts";
import type { GpioBank, GpioLine } from "../../ports.ts";

/** onoff's Gpio class, or one with its constructor and the methods used here. */
export type OnoffGpioClass = new (
  ...args: ConstructorParameters<typeof Gpio>
) => Pick<Gpio, "readSync" | "writeSync" | "watch" | "unwatch" | "unexport">;

/**
 * Real GPIO through onoff (sysfs). A line's kind comes from its name ("door_strike:north" → door_strike),
 * which sets its direction and active level (shared/protocol/gpio-lines.ts); inputs are debounced.
 * `GpioClass` is onoff's own; its sysfs root is fixed, so a test hands in onoff's class bound elsewhere.
 */
export function createOnoffGpioBank(
  lines: Record<string, number>,
  GpioClass: OnoffGpioClass = Gpio,
): GpioBank {
  const opened = new Map<string, { gpio: InstanceType<OnoffGpioClass>; line: GpioLine }>();
  for (const [name, pin] of Object.entries(lines)) {
    const parsed = parseGpioLineName(name);
    if (!parsed) throw new Error(`GPIO line ${name}: unknown kind ${name.split(":", 1)[0]}`);
    const spec = GPIO_LINE_KINDS[parsed.kind];
    const isInput = spec.direction === "in";
    const gpio = isInput
      ? new GpioClass(pin, "in", "both", { activeLow: spec.activeLow, debounceTimeout: 20 })
      : new GpioClass(pin, "low", "none", { activeLow: spec.activeLow });
    opened.set(name, {
      gpio,
      line: {
        read: () => gpio.readSync() === 1,
        write(v) {
          // The kernel refuses it too (EPERM); saying so by name is kinder.
          if (isInput) throw new Error(`GPIO line ${name} is an input`);
          gpio.writeSync(v ? 1 : 0);
        },
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
