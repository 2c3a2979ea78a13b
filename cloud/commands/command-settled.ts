import type { CommandSettledNotifier } from "../ports.ts";
import type { CommandRecord } from "../store/command-record.ts";

export type InProcessSettledNotifier = CommandSettledNotifier & {
  /** How many subscriptions are held (a test can tell that a waiter let go of its own). */
  waiting(): number;
};

/**
 * The in-process CommandSettledNotifier: one per cloud process, shared by what ends commands (gateway
 * link, deadline sweeper, command service) and the requests that wait on them. Other processes' endings
 * reach a waiter through the store (await-settled.ts).
 */
export function createSettledNotifier(): InProcessSettledNotifier {
  type OnNotice = (ended?: CommandRecord) => void;
  const waiters = new Map<string, Set<OnNotice>>();
  return {
    notify(commandId: string, ended?: CommandRecord): void {
      const subscribed = waiters.get(commandId);
      if (subscribed) for (const onNotice of [...subscribed]) onNotice(ended);
    },

    subscribe(commandId: string, onNotice: OnNotice): () => void {
      const set = waiters.get(commandId) ?? new Set<OnNotice>();
      waiters.set(commandId, set);
      // An entry of its own, so the same function subscribed twice is also let go twice.
      const entry: OnNotice = (ended) => onNotice(ended);
      set.add(entry);
      return () => {
        set.delete(entry);
        if (set.size === 0 && waiters.get(commandId) === set) waiters.delete(commandId);
      };
    },

    waiting(): number {
      let n = 0;
      for (const subscribed of waiters.values()) n += subscribed.size;
      return n;
    },
  };
}
