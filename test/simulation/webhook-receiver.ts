import { Webhook } from "standardwebhooks";
import type { SendOutcome, WebhookRequest, WebhookSender } from "../../cloud/webhooks/webhook-sender.ts";

/** How the operator's receiver behaves: answering, unreachable, or taking messages and answering 500. */
export type ReceiverMode = "up" | "down" | "lost-answer";

/** One POST that reached the receiver, whatever it answered. */
export type Received = { id: string; body: string; at: number; verified: boolean };

/**
 * The operator's webhook receiver, in the run's process: the delivery worker's outbound port answered
 * without a socket. It checks every signature with the standardwebhooks library, and keeps every POST
 * that reached it; "lost-answer" takes the message and answers 500, so the cloud must send it again under
 * the same id.
 */
export function createSimReceiver(secret: string, now: () => number) {
  let mode: ReceiverMode = "up";
  const received: Received[] = [];
  const verifier = new Webhook(secret);
  const sender: WebhookSender = {
    send: (req) => Promise.resolve(answer(req)),
    close: () => Promise.resolve(),
  };
  function answer(req: WebhookRequest): SendOutcome {
    if (mode === "down")
      return { kind: "unreachable", reason: "connection refused (simulated receiver down)" };
    let verified = true;
    try {
      verifier.verify(req.body, req.headers);
    } catch {
      verified = false;
    }
    received.push({ id: req.headers["webhook-id"] ?? "", body: req.body, at: now(), verified });
    if (!verified) return { kind: "answered", status: 401 };
    return { kind: "answered", status: mode === "lost-answer" ? 500 : 204 };
  }
  return {
    sender,
    received,
    set(next: ReceiverMode): void {
      mode = next;
    },
  };
}

export type SimReceiver = ReturnType<typeof createSimReceiver>;
