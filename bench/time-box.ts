/**
 * Every bench runs in a time box. One that has not finished within BENCH_TIMEOUT_S seconds (default 300)
 * says what it was doing, stops the processes it started and exits 1, instead of hanging a shell or a CI
 * job. And a bench exits by itself once done: if the process is still alive a few seconds after
 * `finished()`, something it started still holds the event loop (a socket, a child, a read that never
 * ends); it names what and exits 1, so a leak fails the run instead of going unnoticed.
 */
import type { ChildProcess } from "node:child_process";

const TIMEOUT_S = Number(process.env.BENCH_TIMEOUT_S ?? 300);
/** Enough for sockets and child processes to finish closing after the last await of the cleanup. */
const EXIT_GRACE_MS = 5_000;

export type TimeBox = {
  /** Names what the bench is doing now, for the message if the box runs out. */
  step(what: string): void;
  /** A child process to kill if the box runs out (it would outlive the bench otherwise). */
  own(child: ChildProcess): void;
  /** Figures printed and everything closed: the process must now exit on its own. */
  finished(): void;
};

/** What keeps the event loop alive, e.g. "FSReqCallback, TCPSocketWrap × 2". */
function holders(): string {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].map(([r, n]) => (n > 1 ? `${r} × ${n}` : r)).join(", ") || "nothing";
}

export function timeBox(name: string, seconds = TIMEOUT_S): TimeBox {
  let doing = "starting";
  const children = new Set<ChildProcess>();
  // Unreferenced: the box never keeps a finished bench alive.
  const box = setTimeout(() => {
    console.error(
      `${name}: not finished after ${seconds} s (BENCH_TIMEOUT_S) while ${doing}; still active: ${holders()}`,
    );
    for (const c of children) c.kill("SIGKILL");
    process.exit(1);
  }, seconds * 1000);
  box.unref();
  return {
    step(what) {
      doing = what;
    },
    own(child) {
      children.add(child);
      child.once("exit", () => children.delete(child));
    },
    finished() {
      clearTimeout(box);
      setTimeout(() => {
        console.error(`${name}: finished, but still running ${EXIT_GRACE_MS / 1000} s later: ${holders()}`);
        process.exit(1);
      }, EXIT_GRACE_MS).unref();
    },
  };
}
