import { createHook } from "node:async_hooks";
import type { VirtualClock } from "./determinism.ts";

const realImmediate = setImmediate;
let pending = 0;
/** Requests out on the thread pool (crypto, fs): their callbacks land in real time, not virtual. */
const realWork = new Set<number>();
const REQUEST = /REQUEST$|REQ$|REQCALLBACK$|REQPROMISE$|REQWRAP$/;

/**
 * Counts the immediates the system schedules, so the driver knows when it has nothing left to do but
 * wait for (virtual) time. Installed once per process; the count is all it changes.
 */
export function countImmediates(): void {
  createHook({
    init(id, type) {
      // scrypt runs synchronously in a run (determinism.ts): its job has no callback to wait for, and
      // would stay "in flight" until garbage-collected.
      if (REQUEST.test(type) && type !== "SCRYPTREQUEST") realWork.add(id);
    },
    after: (id) => void realWork.delete(id),
    destroy: (id) => void realWork.delete(id),
  }).enable();
  const original = globalThis.setImmediate;
  const originalClear = globalThis.clearImmediate;
  const live = new Set<NodeJS.Immediate>();
  const counted = ((fn: (...a: unknown[]) => void, ...args: unknown[]) => {
    pending++;
    const handle = original(() => {
      if (live.delete(handle)) pending--;
      fn(...args);
    });
    live.add(handle);
    return handle;
  }) as typeof setImmediate;
  globalThis.setImmediate = Object.assign(counted, { __promisify__: original.__promisify__ });
  globalThis.clearImmediate = (handle) => {
    if (handle && live.delete(handle)) pending--;
    originalClear(handle);
  };
}

const turn = () => new Promise<void>((r) => realImmediate(r));

/**
 * Lets everything runnable now run: promise chains, stream ticks, immediates and thread-pool requests,
 * until none is left. Virtual time stands still meanwhile, so a request's real duration never shows.
 */
export async function settle(): Promise<void> {
  const start = process.hrtime.bigint();
  for (let i = 0; ; i++) {
    await turn();
    if (pending === 0 && realWork.size === 0 && i >= 2) return;
    if (i % 1_000 === 999 && process.hrtime.bigint() - start > 30_000_000_000n)
      throw new Error("the system never went quiet (a loop of immediates, or a request that never ends)");
  }
}

/** Moves virtual time forward by `ms`, firing each due timer at its own instant and settling after each. */
export async function advance(clock: VirtualClock, ms: number): Promise<void> {
  const end = clock.now + ms;
  await settle();
  for (;;) {
    const next = nextDue(clock);
    if (next === null || next > end) break;
    clock.next();
    await settle();
  }
  clock.tick(Math.max(0, end - clock.now));
  await settle();
}

/** When the next timer falls due: the head of fake-timers' own heap (it has no public accessor). */
function nextDue(clock: VirtualClock): number | null {
  const heap = (clock as unknown as { timerHeap?: { peek(): { callAt: number } | undefined } }).timerHeap;
  return heap?.peek()?.callAt ?? null;
}
