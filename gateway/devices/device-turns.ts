/**
 * One device's work, one piece at a time, whoever asks: a command from the cloud and a card's tap on one
 * locker never overlap, so each decides on what the other left (a lock arriving as a card parks the locker
 * finds it parked). Keyed by device id.
 */
export function createDeviceTurns() {
  const tails = new Map<string, Promise<unknown>>();
  return {
    /** Runs `work` once every earlier piece for `key` has ended, however it ended. */
    run<T>(key: string, work: () => Promise<T>): Promise<T> {
      const run = (tails.get(key) ?? Promise.resolve()).then(work);
      const tail = run.catch(() => undefined);
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return run;
    },
  };
}

export type DeviceTurns = ReturnType<typeof createDeviceTurns>;
