import { constants } from "node:os";

export type StopSignal = "SIGTERM" | "SIGINT";
const STOP_SIGNALS: readonly StopSignal[] = ["SIGTERM", "SIGINT"];

/** Where the signals come from (`process`); tests pass an emitter. */
export type SignalSource = { on(signal: StopSignal, listener: () => void): unknown };

export type StopSignals = {
  /**
   * Hands over the service's graceful stop, once it has started and before it says it is ready. True when a
   * signal came while it was starting: the stop is under way and the service does not announce itself.
   */
  stopWith(stop: (signal: StopSignal) => Promise<void>): boolean;
};

/**
 * SIGTERM and SIGINT of a service (the cloud, the gateway daemon, the demo), caught from the start of its
 * `main()`: until a listener is on, Node leaves a signal its default action, which ends the process by the
 * signal instead of the stop that exits 0. A listener added after "ready" (a log line, systemd's READY=1)
 * left a window in which `systemctl stop` right after a start killed the service. A signal while the service
 * starts stops it as soon as it has started; a second one, while that stop waits or runs, ends the process
 * at once with 128 + the signal's number, as a shell reports a program that signal ended (Ctrl-C twice).
 */
export function catchStopSignals(
  o: { source?: SignalSource; exit?: (code: number) => void } = {},
): StopSignals {
  const source = o.source ?? process;
  const exit = o.exit ?? ((code: number) => process.exit(code));
  let stop: ((signal: StopSignal) => Promise<void>) | null = null;
  let received: StopSignal | null = null;
  for (const signal of STOP_SIGNALS)
    source.on(signal, () => {
      if (received !== null) return exit(128 + constants.signals[signal]);
      received = signal;
      if (stop) void stop(signal);
    });
  return {
    stopWith(fn) {
      stop = fn;
      if (received === null) return false;
      void fn(received);
      return true;
    },
  };
}
