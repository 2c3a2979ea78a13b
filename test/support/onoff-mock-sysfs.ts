/**
 * onoff's own code (node_modules/onoff/onoff.js) on a mock sysfs. onoff hard-codes its root
 * (/sys/class/gpio), so its module is loaded with a `fs` that maps that root into a temporary directory
 * behaving like the kernel's GPIO sysfs: writing N to `export` makes `gpioN/` with `value`, `direction`,
 * `edge` and `active_low`; `unexport` removes it; `direction` takes in/out/high/low; with `active_low` 1
 * the `value` file reads and writes inverted, as the kernel presents it. epoll cannot watch a regular file, so `epoll` is replaced by a poller
 * the hardware side triggers when it changes an input, as the kernel's edge interrupt does.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import vm from "node:vm";
import type { OnoffGpioClass } from "../../gateway/adapters/gpio/gpio-onoff.ts";

const SYSFS_ROOT = "/sys/class/gpio/";
const EPOLLPRI = 2;

type Poller = { callback: (err: Error | null, fd: number, events: number) => void; fds: Set<number> };

export type MockSysfs = {
  /** onoff's Gpio class, bound to this sysfs. */
  Gpio: OnoffGpioClass;
  /** The directory standing in for /sys/class/gpio. */
  root: string;
  /** Whether pin `pin` is exported. */
  isExported(pin: number): boolean;
  /** A sysfs attribute of an exported pin, as the kernel shows it (e.g. "direction", "active_low"). */
  attribute(pin: number, name: string): string;
  /** The hardware sets the electrical level of a pin; an edge wakes whoever polls its value file. */
  setLevel(pin: number, high: boolean): void;
  /** The electrical level of a pin. */
  level(pin: number): boolean;
  remove(): void;
};

const isGpioClass = (x: unknown): x is OnoffGpioClass =>
  typeof x === "function" &&
  typeof (x as { prototype?: { readSync?: unknown } }).prototype?.readSync === "function";

/** `levels`: the electrical level the hardware holds each pin at (default low), exported or not. */
export function createMockSysfs(levels: Record<number, boolean> = {}): MockSysfs {
  const root = fs.mkdtempSync(path.join(tmpdir(), "mock-sysfs-"));
  fs.writeFileSync(path.join(root, "export"), "");
  fs.writeFileSync(path.join(root, "unexport"), "");
  const pinDir = (pin: number) => path.join(root, `gpio${pin}`);
  /** Open value files: fd → pin. */
  const valueFds = new Map<number, number>();
  const pollers = new Set<Poller>();

  const real = (p: string) => (p.startsWith(SYSFS_ROOT) ? path.join(root, p.slice(SYSFS_ROOT.length)) : p);
  const pinOfValue = (p: string) => /gpio(\d+)\/value$/.exec(p)?.[1];
  const activeLow = (pin: number) =>
    fs.readFileSync(path.join(pinDir(pin), "active_low"), "utf8").trim() === "1";
  const hardware = new Map(Object.entries(levels).map(([pin, high]) => [Number(pin), high]));
  const physical = (pin: number) => hardware.get(pin) ?? false;
  /** The level lives with the hardware; an exported pin's value file shows it. */
  const store = (pin: number, high: boolean) => {
    hardware.set(pin, high);
    if (fs.existsSync(pinDir(pin))) fs.writeFileSync(path.join(pinDir(pin), "value"), high ? "1" : "0");
  };

  const sysfs: typeof fs = {
    ...fs,
    existsSync: (p: fs.PathLike) => fs.existsSync(real(String(p))),
    readFileSync: ((p: fs.PathOrFileDescriptor, ...rest: unknown[]) =>
      fs.readFileSync(typeof p === "string" ? real(p) : p, ...(rest as []))) as typeof fs.readFileSync,
    writeFileSync: ((p: fs.PathOrFileDescriptor, data: string | NodeJS.ArrayBufferView) => {
      const file = typeof p === "string" ? real(p) : p;
      const pin = Number(String(data));
      if (file === path.join(root, "export")) {
        if (fs.existsSync(pinDir(pin))) throw Object.assign(new Error("EBUSY"), { code: "EBUSY" });
        fs.mkdirSync(pinDir(pin));
        for (const [name, v] of [
          ["value", physical(pin) ? "1" : "0"],
          ["direction", "in"],
          ["edge", "none"],
          ["active_low", "0"],
        ])
          fs.writeFileSync(path.join(pinDir(pin), name as string), v as string);
        return;
      }
      if (file === path.join(root, "unexport")) {
        fs.rmSync(pinDir(pin), { recursive: true, force: true });
        return;
      }
      const dir = typeof file === "string" && /\/gpio(\d+)\/direction$/.exec(file)?.[1];
      if (dir) {
        // "high"/"low" make an output with that electrical level (the kernel's raw value), "out" a low one.
        const how = String(data).trim();
        fs.writeFileSync(file, how === "in" ? "in" : "out");
        if (how !== "in") store(Number(dir), how === "high");
        return;
      }
      fs.writeFileSync(file, data);
    }) as typeof fs.writeFileSync,
    openSync: ((p: fs.PathLike, flags: fs.OpenMode = "r") => {
      const file = real(String(p));
      const fd = fs.openSync(file, flags);
      const pin = pinOfValue(file);
      if (pin !== undefined) valueFds.set(fd, Number(pin));
      return fd;
    }) as typeof fs.openSync,
    closeSync: (fd: number) => {
      valueFds.delete(fd);
      fs.closeSync(fd);
    },
    readSync: ((fd: number, buffer: Buffer, offset: number, length: number, position: number) => {
      const pin = valueFds.get(fd);
      if (pin === undefined) return fs.readSync(fd, buffer, offset, length, position);
      buffer[offset] = (physical(pin) !== activeLow(pin) ? "1" : "0").charCodeAt(0);
      return 1;
    }) as typeof fs.readSync,
    writeSync: ((fd: number, buffer: Buffer, offset?: number, length?: number, position?: number) => {
      const pin = valueFds.get(fd);
      if (pin === undefined) return fs.writeSync(fd, buffer, offset, length, position);
      const logical = String.fromCharCode(buffer[offset ?? 0] ?? 48) === "1";
      store(pin, logical !== activeLow(pin));
      return 1;
    }) as typeof fs.writeSync,
  };

  class MockEpoll {
    static readonly EPOLLPRI = EPOLLPRI;
    private readonly poller: Poller;
    constructor(callback: Poller["callback"]) {
      this.poller = { callback, fds: new Set() };
      pollers.add(this.poller);
    }
    add(fd: number) {
      this.poller.fds.add(fd);
      return this;
    }
    remove(fd: number) {
      this.poller.fds.delete(fd);
      return this;
    }
    close() {
      pollers.delete(this.poller);
      return this;
    }
  }

  const onoffFile = createRequire(import.meta.url).resolve("onoff");
  const requireNear = createRequire(onoffFile);
  const load = vm.compileFunction(fs.readFileSync(onoffFile, "utf8"), ["require", "module", "exports"], {
    filename: onoffFile,
  });
  const mod: { exports: { Gpio?: unknown } } = { exports: {} };
  load(
    (name: string) => (name === "fs" ? sysfs : name === "epoll" ? { Epoll: MockEpoll } : requireNear(name)),
    mod,
    mod.exports,
  );
  const Gpio = mod.exports.Gpio;
  if (!isGpioClass(Gpio)) throw new Error("onoff did not export its Gpio class");

  return {
    Gpio,
    root,
    isExported: (pin) => fs.existsSync(pinDir(pin)),
    attribute: (pin, name) => fs.readFileSync(path.join(pinDir(pin), name), "utf8").trim(),
    level: physical,
    setLevel(pin, high) {
      if (physical(pin) === high) return;
      store(pin, high);
      if (!fs.existsSync(pinDir(pin))) return;
      const edge = fs.readFileSync(path.join(pinDir(pin), "edge"), "utf8").trim();
      if (edge === "none") return;
      // The kernel wakes pollers of the value file after the edge, not inside the write.
      for (const [fd, p] of valueFds) {
        if (p !== pin) continue;
        for (const poller of pollers)
          if (poller.fds.has(fd))
            setImmediate(() => poller.fds.has(fd) && poller.callback(null, fd, EPOLLPRI));
      }
    },
    remove: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}
