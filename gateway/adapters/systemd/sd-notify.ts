/**
 * sd_notify(3) for the gateway daemon: READY=1, STATUS=…, WATCHDOG=1, STOPPING=1 to $NOTIFY_SOCKET, and a
 * no-op when NOTIFY_SOCKET is unset (not started by systemd, or Type= is not notify).
 *
 * Why /usr/bin/systemd-notify: the protocol is one AF_UNIX SOCK_DGRAM datagram, and Node has no unix
 * datagram sockets. The npm alternatives are native addons (unix-dgram, sd-notify) that must compile on
 * every controller image and follow Node's ABI; systemd-notify ships with systemd itself, so it is on every
 * machine where the messages mean anything, and is maintained with the protocol. Its cost is one short
 * process per message (a watchdog ping every WatchdogSec/2 = 15 s). What the unit needs for it:
 *   - NotifyAccess=all: the sender is systemd-notify (a child of node), not the main PID, and an unprivileged
 *     service cannot make it send on node's behalf.
 *   - systemd-notify's default barrier (BARRIER=1 after each message, waiting for the manager to close
 *     the fd it passes) must stay on (no --no-block), so the manager has identified the short-lived sender
 *     before it exits; otherwise messages from an exited process may be dropped.
 * Messages are sent one at a time in call order, so READY=1 never overtakes an earlier STATUS=.
 */
import { execFile } from "node:child_process";

export const SYSTEMD_NOTIFY = "/usr/bin/systemd-notify";

export type NotifyLog = { warn(obj: object, msg?: string): void };

export interface SdNotify {
  /** False when NOTIFY_SOCKET is unset: every call resolves at once to false. */
  readonly enabled: boolean;
  /** Sends `KEY=value` assignments in one message; resolves true once the manager took it. Never rejects. */
  notify(...assignments: string[]): Promise<boolean>;
  ready(status?: string): Promise<boolean>;
  status(text: string): Promise<boolean>;
  watchdog(): Promise<boolean>;
  stopping(status?: string): Promise<boolean>;
}

export type SdNotifyOptions = {
  env?: Record<string, string | undefined>;
  /** The systemd-notify binary (tests may point it elsewhere). */
  binary?: string;
  /** A message that takes longer than this (a hung manager) is abandoned and logged. */
  timeoutMs?: number;
  log?: NotifyLog;
};

/** One line per value: newlines would split an assignment into two. */
function clean(text: string): string {
  return text.replace(/[\r\n]+/g, " ").trim();
}

export function createSdNotify(opts: SdNotifyOptions = {}): SdNotify {
  const env = opts.env ?? process.env;
  const socket = env.NOTIFY_SOCKET;
  const binary = opts.binary ?? SYSTEMD_NOTIFY;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  let queue: Promise<unknown> = Promise.resolve();

  const send = (assignments: string[]): Promise<boolean> =>
    new Promise((resolve) => {
      execFile(
        binary,
        assignments,
        { env: { NOTIFY_SOCKET: socket }, timeout: timeoutMs },
        (err, _out, stderr) => {
          if (err) opts.log?.warn({ err, assignments, stderr: stderr.trim() }, "sd_notify failed");
          resolve(!err);
        },
      );
    });

  const notify = (...assignments: string[]): Promise<boolean> => {
    if (!socket) return Promise.resolve(false);
    const valid = assignments.map(clean).filter((a) => /^[A-Z_][A-Z0-9_]*=/.test(a));
    if (valid.length === 0) return Promise.resolve(false);
    const sent = queue.then(() => send(valid));
    queue = sent;
    return sent;
  };

  return {
    enabled: Boolean(socket),
    notify,
    ready: (status) => (status === undefined ? notify("READY=1") : notify("READY=1", `STATUS=${status}`)),
    status: (text) => notify(`STATUS=${text}`),
    watchdog: () => notify("WATCHDOG=1"),
    stopping: (status) =>
      status === undefined ? notify("STOPPING=1") : notify("STOPPING=1", `STATUS=${status}`),
  };
}

/**
 * How often to ping, from the WATCHDOG_USEC systemd sets (WatchdogSec=): half the timeout, as sd_watchdog_enabled(3)
 * recommends; null when the watchdog is off or meant for another process (WATCHDOG_PID).
 */
export function watchdogIntervalMs(
  env: Record<string, string | undefined> = process.env,
  pid = process.pid,
): number | null {
  const usec = Number(env.WATCHDOG_USEC);
  if (!Number.isFinite(usec) || usec <= 0) return null;
  if (env.WATCHDOG_PID && Number(env.WATCHDOG_PID) !== pid) return null;
  return Math.max(1, Math.floor(usec / 2000));
}
