import type { Db } from "../../cloud/store/db.ts";
import type { Received } from "./webhook-receiver.ts";

/**
 * Every webhook is delivered at least once under a stable id: once the world ran quiet, every message the
 * cloud queued for the endpoint is delivered, the receiver took each one with a valid signature, every id
 * it saw is one the cloud queued, and every POST of one id carried the same body (a retry is the same
 * message, never a new one).
 */
export async function webhooksDelivered(db: Db, endpointId: string, received: Received[]): Promise<string[]> {
  const messages = await db
    .selectFrom("webhook_messages")
    .select(["id", "type", "status", "attempts", "payload", "last_error"])
    .where("endpoint_id", "=", endpointId)
    .orderBy("queued_at")
    .execute();
  return judgeWebhooks(messages, received);
}

/** A queued message as the cloud's store holds it. */
export type MessageRow = {
  id: string;
  type: string;
  status: string;
  attempts: number;
  payload: string;
  last_error: string | null;
};

/** The judgement of `webhooksDelivered` (pure). */
export function judgeWebhooks(messages: MessageRow[], received: Received[]): string[] {
  const failures: string[] = [];
  const queued = new Map(messages.map((m) => [m.id, m]));
  const taken = new Map<string, string>();
  for (const r of received) {
    const m = queued.get(r.id);
    if (!m) failures.push(`webhook ${r.id}: the receiver got an id the cloud never queued`);
    else if (r.body !== m.payload)
      failures.push(`webhook ${r.id}: a POST carried a body other than the message's`);
    if (!r.verified) failures.push(`webhook ${r.id}: a POST's signature did not verify`);
    const before = taken.get(r.id);
    if (before !== undefined && before !== r.body)
      failures.push(`webhook ${r.id}: sent again with another body`);
    if (r.verified) taken.set(r.id, r.body);
  }
  for (const m of messages) {
    if (m.status !== "delivered")
      failures.push(
        `webhook ${m.id} (${m.type}) is ${m.status} after ${m.attempts} attempts (${m.last_error ?? "no error"}) once the world ran quiet`,
      );
    else if (!taken.has(m.id))
      failures.push(`webhook ${m.id} (${m.type}) is marked delivered, but the receiver never took it`);
  }
  return failures;
}
