import { isTerminal } from "../../shared/domain/command-machine.ts";
import type { Clock, TimerHandle } from "../../shared/time/clock.ts";
import type { CommandSettledNotifier } from "../ports.ts";
import type { CommandRecord } from "../store/command-record.ts";

/** A request's `Prefer: wait`: how long it may wait for its command to end, and whether its client left. */
export type CommandWait = { ms: number; signal: AbortSignal };

export type AwaitSettledDeps = {
  clock: Clock;
  settled: CommandSettledNotifier;
  /** How often the command's row is read for endings another replica wrote. */
  pollMs: number;
};

/**
 * Reads a command until it has ended (SUCCESS or ERROR) or `wait.ms` has passed, whichever comes first,
 * and returns it as it is then. A notice from this process that carries the ended command answers with it
 * (once a read has shown the caller may see the command: no read after the write); one without it reads
 * the command at once; a light poll of the one row learns what other replicas wrote. Its timers and
 * subscription are let go as soon as it answers or the client leaves. `read` throws what the caller should
 * answer (not found).
 */
export function awaitSettled(
  deps: AwaitSettledDeps,
  commandId: string,
  read: () => Promise<CommandRecord>,
  wait: CommandWait,
): Promise<CommandRecord> {
  const { clock, settled, pollMs } = deps;
  if (wait.ms <= 0 || wait.signal.aborted) return read();
  return new Promise((resolve, reject) => {
    let done = false;
    /** A read succeeded: the caller may see this command (`read` throws otherwise). */
    let seen = false;
    let reading = false;
    let readAgain = false;
    let poll: TimerHandle | null = null;

    function release() {
      done = true;
      unsubscribe();
      clock.clearTimer(deadline);
      if (poll) clock.clearTimer(poll);
      wait.signal.removeEventListener("abort", finish);
    }

    /** Time is up or the client left: one last read answers with the command as it is now. */
    function finish() {
      if (done) return;
      release();
      read().then(resolve, reject);
    }

    function check(ended?: CommandRecord) {
      if (done) return;
      if (ended && seen && isTerminal(ended.state.value)) {
        release();
        resolve(ended);
        return;
      }
      // A notice during a read may mean the read came too early: read once more after it.
      if (reading) {
        readAgain = true;
        return;
      }
      reading = true;
      read().then(
        (command) => {
          reading = false;
          seen = true;
          if (done) return;
          if (isTerminal(command.state.value)) {
            release();
            resolve(command);
          } else if (readAgain) {
            readAgain = false;
            check();
          } else {
            poll ??= clock.setTimer(pollMs, () => {
              poll = null;
              check();
            });
          }
        },
        (err: unknown) => {
          reading = false;
          if (done) return;
          release();
          reject(err);
        },
      );
    }

    // Subscribed before the first read, so an ending between that read and the subscription is not missed.
    const unsubscribe = settled.subscribe(commandId, check);
    const deadline = clock.setTimer(wait.ms, finish);
    wait.signal.addEventListener("abort", finish, { once: true });
    check();
  });
}
