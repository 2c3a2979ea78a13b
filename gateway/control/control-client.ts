/**
 * parkctl's end of the control socket: one request per call over a fresh connection (protocol in
 * control-api.ts). A daemon that is not there is a ControlUnreachableError; an answer with an error is a
 * ControlCallError carrying the daemon's code.
 */
import { createConnection } from "node:net";
import { systemClock } from "../../shared/node/system-clock.ts";
import type { Clock } from "../../shared/time/clock.ts";

export type UnreachableReason = "not_running" | "permission_denied" | "timeout" | "closed";

/** The daemon could not be asked: no socket, nobody listening, no permission, no answer in time. */
export class ControlUnreachableError extends Error {
  constructor(
    readonly path: string,
    readonly reason: UnreachableReason,
    message: string,
  ) {
    super(message);
    this.name = "ControlUnreachableError";
  }
}

/** The daemon answered with an error (unknown_method, bad_request, device_not_found, failed, …). */
export class ControlCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ControlCallError";
  }
}

let nextId = 1;

export function callControl(
  path: string,
  method: string,
  params: Record<string, unknown> = {},
  opts: { timeoutMs?: number; clock?: Clock } = {},
): Promise<unknown> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const clock = opts.clock ?? systemClock;
  const id = nextId++;
  return new Promise((resolve, reject) => {
    let settled = false;
    let buffered = "";
    const socket = createConnection(path);
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clock.clearTimer(timer);
      socket.destroy();
      fn();
    };
    const timer = clock.setTimer(timeoutMs, () =>
      finish(() =>
        reject(
          new ControlUnreachableError(
            path,
            "timeout",
            `the gateway daemon did not answer ${method} within ${timeoutMs} ms`,
          ),
        ),
      ),
    );
    socket.setEncoding("utf8");
    socket.once("connect", () => socket.write(`${JSON.stringify({ id, method, params })}\n`));
    socket.on("data", (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let answer: { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } };
        try {
          answer = JSON.parse(line);
        } catch {
          finish(() =>
            reject(new Error(`the gateway daemon sent a line that is not JSON: ${line.slice(0, 200)}`)),
          );
          return;
        }
        if (answer.id !== id && answer.id !== null) continue;
        if (answer.error) {
          const { code, message } = answer.error;
          finish(() =>
            reject(new ControlCallError(String(code ?? "failed"), String(message ?? "request failed"))),
          );
        } else {
          finish(() => resolve(answer.result));
        }
        return;
      }
    });
    socket.on("error", (err: NodeJS.ErrnoException) => finish(() => reject(connectError(path, err))));
    socket.on("close", () =>
      finish(() =>
        reject(
          new ControlUnreachableError(
            path,
            "closed",
            `the gateway daemon closed the connection before answering ${method}`,
          ),
        ),
      ),
    );
  });
}

function connectError(path: string, err: NodeJS.ErrnoException): Error {
  switch (err.code) {
    case "ENOENT":
    case "ENOTDIR":
      return new ControlUnreachableError(
        path,
        "not_running",
        `the gateway daemon is not running (no control socket at ${path})`,
      );
    case "ECONNREFUSED":
      return new ControlUnreachableError(
        path,
        "not_running",
        `the gateway daemon is not running (nothing listens on ${path})`,
      );
    case "EACCES":
    case "EPERM":
      return new ControlUnreachableError(
        path,
        "permission_denied",
        `permission denied on the control socket ${path} (run as root or a member of the daemon's group)`,
      );
    default:
      return err;
  }
}
