/**
 * Expectation helpers on what the host sent a board (the zwave-js expectHostMessage idea): tests assert on
 * decoded requests, not on bytes, and wait for them without sleeping.
 */
import type { HostRequest } from "../shared/protocol/lock-bus/messages.ts";
import type { LockBoard } from "./lock-controller.ts";

type Predicate<T extends HostRequest> = ((r: HostRequest) => r is T) | ((r: HostRequest) => boolean);

/**
 * Resolves with the next request to `board` that matches (arriving after the call), or rejects after
 * `timeoutMs`. Call it before triggering the gateway action to avoid a race.
 */
export function expectHostRequest<T extends HostRequest = HostRequest>(
  board: LockBoard,
  predicate: Predicate<T>,
  timeoutMs = 1_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      const seen = board.received.map((r) => r.kind).join(", ") || "nothing";
      reject(
        new Error(
          `board ${board.address}: no matching host request within ${timeoutMs} ms (received: ${seen})`,
        ),
      );
    }, timeoutMs);
    const off = board.onRequest((req) => {
      if (!predicate(req)) return;
      clearTimeout(timer);
      off();
      resolve(req as T);
    });
  });
}

/** Returns the first request the board has already received that matches; throws if there is none. */
export function assertReceivedHostRequest<T extends HostRequest = HostRequest>(
  board: LockBoard,
  predicate: Predicate<T>,
): T {
  const found = board.received.find((r) => predicate(r));
  if (!found) {
    const seen = board.received.map((r) => JSON.stringify(r)).join("\n  ") || "nothing";
    throw new Error(`board ${board.address} received no matching host request; received:\n  ${seen}`);
  }
  return found as T;
}
