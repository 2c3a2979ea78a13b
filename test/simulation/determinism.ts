import type { webcrypto } from "node:crypto";
import crypto from "node:crypto";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { performance } from "node:perf_hooks";
import FakeTimers from "@sinonjs/fake-timers";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

/**
 * A seeded source of every random choice a run makes: the workload's, the faults', and (once installed)
 * the system's own ids, tokens and jitter. Same seed, same numbers, in the same order.
 */
export class Prng {
  private gen: ReturnType<typeof xoroshiro128plus>;

  constructor(readonly seed: number) {
    this.gen = xoroshiro128plus(seed);
  }

  /**
   * Starts the stream afresh after a start-up whose draws depend on module loading, from a seed of its own:
   * back at the seed's first number, a run after others in one process drew its first daemon's session token
   * again for the daemon restarted in its place, which took the first one's offline for its own (seed 800102).
   */
  restart(): void {
    this.gen = xoroshiro128plus(this.seed ^ 0x68e31da4);
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return uniformInt(this.gen, min, max);
  }

  /** A float in [0, 1). */
  float(): number {
    return this.int(0, 2 ** 30 - 1) / 2 ** 30;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from nothing");
    return items[this.int(0, items.length - 1)] as T;
  }

  fill(bytes: Uint8Array): Uint8Array {
    for (let i = 0; i < bytes.length; i++) bytes[i] = this.int(0, 255);
    return bytes;
  }
}

/** The virtual clock: fake-timers' installed clock. */
export type VirtualClock = ReturnType<ReturnType<typeof FakeTimers.withGlobal>["install"]>;

export type VirtualWorld = {
  clock: VirtualClock;
  /** Puts time, timers and randomness back as they were. */
  uninstall(): void;
};

type Patch = { target: object; key: string; value: unknown };

/** HMAC keys imported while a run was installed, with their bytes: kept across runs (jose caches keys). */
const HMAC_KEYS = new WeakMap<webcrypto.CryptoKey, { hash: string; raw: Buffer }>();

/**
 * Makes this process deterministic for one run: Date, setTimeout and setInterval run on a virtual clock
 * that moves only when the driver says, performance.now() follows it, and Math.random, node:crypto's
 * random bytes and UUIDs, WebCrypto's getRandomValues and reads of /dev/urandom draw from `rng`. scrypt and
 * HMAC run synchronously, so no thread-pool callback lands at a wall-clock moment. setImmediate and process.nextTick stay real:
 * with no real I/O in the run they order work deterministically, and the driver waits on them.
 */
export function installVirtualWorld(rng: Prng, startMs: number): VirtualWorld {
  const clock = FakeTimers.withGlobal(globalThis).install({
    now: startMs,
    toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"],
    loopLimit: 10_000_000,
  });
  const t0 = startMs;
  const bytes = (n: number) => Buffer.from(rng.fill(new Uint8Array(n)));
  const uuid = () => {
    const b = bytes(16);
    b[6] = ((b[6] as number) & 0x0f) | 0x40;
    b[8] = ((b[8] as number) & 0x3f) | 0x80;
    const h = b.toString("hex");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  const fillView = <T extends ArrayBufferView | null>(view: T): T => {
    if (view) rng.fill(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
    return view;
  };
  const scrypt = (...args: unknown[]) => {
    const cb = args.pop() as (err: Error | null, key?: Buffer) => void;
    try {
      const key = (crypto.scryptSync as (...a: unknown[]) => Buffer)(...args);
      process.nextTick(cb, null, key);
    } catch (err) {
      process.nextTick(cb, err as Error);
    }
  };
  const randomBytes = (n: number, cb?: (err: Error | null, b: Buffer) => void) => {
    const b = bytes(n);
    if (!cb) return b;
    process.nextTick(cb, null, b);
    return undefined;
  };
  // The gateway reads its few UUIDs' bytes from /dev/urandom itself (shared/node/random-uuid.ts).
  const urandom = new Set<number>();
  const { openSync, readSync, closeSync } = fs;
  const open = (file: fs.PathLike, ...rest: unknown[]) => {
    const fd = (openSync as (...a: unknown[]) => number)(file, ...rest);
    if (file === "/dev/urandom") urandom.add(fd);
    return fd;
  };
  const read = (fd: number, buffer: NodeJS.ArrayBufferView, ...rest: unknown[]) => {
    if (!urandom.has(fd)) return (readSync as (...a: unknown[]) => number)(fd, buffer, ...rest);
    const offset = typeof rest[0] === "number" ? rest[0] : 0;
    const length = typeof rest[1] === "number" ? rest[1] : buffer.byteLength - offset;
    rng.fill(new Uint8Array(buffer.buffer, buffer.byteOffset + offset, length));
    return length;
  };
  const close = (fd: number) => {
    urandom.delete(fd);
    closeSync(fd);
  };
  const subtle = globalThis.crypto.subtle;
  const { importKey, sign, verify } = subtle;
  const hmac = (key: webcrypto.CryptoKey, data: webcrypto.BufferSource) => {
    const k = HMAC_KEYS.get(key);
    if (!k) return null;
    const view = ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);
    return crypto.createHmac(k.hash, k.raw).update(view).digest();
  };
  const patches: Patch[] = [
    // HMAC (the tokens' signatures) runs synchronously: WebCrypto's thread-pool job would land at a
    // wall-clock moment, between other work of the same virtual instant.
    {
      target: subtle,
      key: "importKey",
      value: async (...args: Parameters<webcrypto.SubtleCrypto["importKey"]>) => {
        const key = await (importKey as (...a: unknown[]) => Promise<webcrypto.CryptoKey>).apply(
          subtle,
          args,
        );
        const [format, data, algorithm] = args;
        const alg = algorithm as { name?: string; hash?: string | { name: string } };
        if (format === "raw" && alg.name === "HMAC" && alg.hash) {
          const hash = (typeof alg.hash === "string" ? alg.hash : alg.hash.name)
            .replace("-", "")
            .toLowerCase();
          HMAC_KEYS.set(key, { hash, raw: Buffer.from(data as Uint8Array) });
        }
        return key;
      },
    },
    {
      target: subtle,
      key: "sign",
      value: (alg: webcrypto.AlgorithmIdentifier, key: webcrypto.CryptoKey, data: webcrypto.BufferSource) => {
        const mac = hmac(key, data);
        if (!mac) return sign.call(subtle, alg, key, data);
        return Promise.resolve(mac.buffer.slice(mac.byteOffset, mac.byteOffset + mac.byteLength));
      },
    },
    {
      target: subtle,
      key: "verify",
      value: (
        alg: webcrypto.AlgorithmIdentifier,
        key: webcrypto.CryptoKey,
        signature: webcrypto.BufferSource,
        data: webcrypto.BufferSource,
      ) => {
        const mac = hmac(key, data);
        if (!mac) return verify.call(subtle, alg, key, signature, data);
        const sig = ArrayBuffer.isView(signature)
          ? Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength)
          : Buffer.from(signature);
        return Promise.resolve(sig.length === mac.length && crypto.timingSafeEqual(sig, mac));
      },
    },
    { target: fs, key: "openSync", value: open },
    { target: fs, key: "readSync", value: read },
    { target: fs, key: "closeSync", value: close },
    { target: Math, key: "random", value: () => rng.float() },
    { target: performance, key: "now", value: () => Date.now() - t0 },
    { target: crypto, key: "randomBytes", value: randomBytes },
    { target: crypto, key: "pseudoRandomBytes", value: randomBytes },
    { target: crypto, key: "randomUUID", value: uuid },
    { target: crypto, key: "randomFillSync", value: fillView },
    { target: crypto, key: "scrypt", value: scrypt },
    // node:crypto.getRandomValues is a getter onto this one.
    { target: globalThis.crypto, key: "getRandomValues", value: fillView },
    { target: globalThis.crypto, key: "randomUUID", value: uuid },
  ];
  const saved = patches.map((p) => ({ ...p, value: Reflect.get(p.target, p.key) }));
  for (const p of patches)
    Object.defineProperty(p.target, p.key, { value: p.value, configurable: true, writable: true });
  syncBuiltinESMExports();
  return {
    clock,
    uninstall() {
      for (const p of saved)
        Object.defineProperty(p.target, p.key, { value: p.value, configurable: true, writable: true });
      syncBuiltinESMExports();
      clock.uninstall();
    },
  };
}
