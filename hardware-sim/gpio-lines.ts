/**
 * In-memory GPIO lines that fit the gateway's GpioBank port structurally (line(name) → read/write/watch,
 * close). Values are logical, as in the protocol doc: `true` is active whatever the electrical level. The
 * gateway drives outputs through `line()`; the simulator drives inputs through `simLine()`.
 */
import { gpioLineSpec } from "../shared/protocol/gpio-lines.ts";

type Direction = "in" | "out" | "both";

/** A line of a kind the protocol does not name may be driven from either side. */
function directionOf(name: string): Direction {
  return gpioLineSpec(name)?.direction ?? "both";
}

/** The simulator's handle on a line: it may set any line, inputs included. */
export class SimGpioLine {
  readonly direction: Direction;
  private value: boolean;
  private readonly watchers = new Set<(value: boolean) => void>();

  constructor(
    readonly name: string,
    initial = false,
  ) {
    this.direction = directionOf(name);
    this.value = initial;
  }

  read(): boolean {
    return this.value;
  }

  /** Sets the level; watchers hear only real changes, as an edge-triggered GPIO reports them. */
  set(value: boolean): void {
    if (value === this.value) return;
    this.value = value;
    for (const w of [...this.watchers]) w(value);
  }

  watch(onChange: (value: boolean) => void): () => void {
    this.watchers.add(onChange);
    return () => this.watchers.delete(onChange);
  }
}

/** What the gateway holds: writing an input throws, as onoff does for a line opened "in". */
export type GatewayGpioLine = {
  read(): boolean;
  write(value: boolean): void;
  watch(onChange: (value: boolean) => void): () => void;
};

export class SimGpioBank {
  private readonly lines = new Map<string, SimGpioLine>();
  /** Watches the gateway registered, dropped by close() without touching the simulator's own. */
  private readonly gatewayWatches = new Set<() => void>();

  /** `lines`: name → initial logical value (default false). */
  constructor(lines: Record<string, boolean> | readonly string[] = []) {
    const entries = Array.isArray(lines) ? lines.map((n) => [n, false] as const) : Object.entries(lines);
    for (const [name, initial] of entries) this.define(name, initial);
  }

  /** Adds a line (idempotent: an existing line keeps its value). */
  define(name: string, initial = false): SimGpioLine {
    const existing = this.lines.get(name);
    if (existing) return existing;
    const line = new SimGpioLine(name, initial);
    this.lines.set(name, line);
    return line;
  }

  get names(): string[] {
    return [...this.lines.keys()];
  }

  /** The simulator's side of a line; throws for an unknown name. */
  simLine(name: string): SimGpioLine {
    const line = this.lines.get(name);
    if (!line) throw new Error(`unknown GPIO line "${name}"`);
    return line;
  }

  /** The gateway's side (GpioBank.line); throws for an unknown name like a misconfigured pin. */
  line(name: string): GatewayGpioLine {
    const line = this.simLine(name);
    return {
      read: () => line.read(),
      write: (value) => {
        if (line.direction === "in") throw new Error(`GPIO line "${name}" is an input`);
        line.set(value);
      },
      watch: (onChange) => {
        const off = line.watch(onChange);
        const unwatch = () => {
          off();
          this.gatewayWatches.delete(unwatch);
        };
        this.gatewayWatches.add(unwatch);
        return unwatch;
      },
    };
  }

  /** The gateway lets go of its lines; the simulated hardware keeps its state for the next owner. */
  close(): void {
    for (const unwatch of [...this.gatewayWatches]) unwatch();
  }
}
