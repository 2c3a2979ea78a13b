import type { GatewayPublisher } from "../ports.ts";

/** The wire's limit on seqs in one ack (shared/wire/messages.ts `Ack`). */
const MAX_SEQS = 1_000;

type Open = {
  gatewayId: string;
  outboxId: string;
  seqs: number[];
  sent: Promise<void>;
  settle: (p: Promise<void>) => void;
};

/**
 * Acknowledges a gateway's reports committed together in one ack: a batch's commit settles them all in one
 * turn of the event loop, so what is asked within that turn goes out as one message per gateway and outbox
 * (one QoS 1 publish and PUBACK instead of one per report: 15 at a fleet's first start). Each caller's
 * promise settles with that publish.
 */
export function createAckBatcher(publisher: Pick<GatewayPublisher, "ack">) {
  let open = new Map<string, Open>();
  let scheduled = false;

  const send = (o: Open) => o.settle(publisher.ack(o.gatewayId, o.seqs, o.outboxId));

  function flush() {
    const due = open;
    open = new Map();
    scheduled = false;
    for (const o of due.values()) send(o);
  }

  function opened(gatewayId: string, outboxId: string): Open {
    let settle!: (p: Promise<void>) => void;
    const sent = new Promise<void>((resolve) => {
      settle = resolve;
    });
    return { gatewayId, outboxId, seqs: [], sent, settle };
  }

  return {
    /** Resolves once the ack naming `seq` has been published (the broker's PUBACK). */
    ack(gatewayId: string, seq: number, outboxId: string): Promise<void> {
      const key = JSON.stringify([gatewayId, outboxId]);
      let o = open.get(key);
      if (o && o.seqs.length >= MAX_SEQS) {
        send(o); // full: goes now, and this seq with what follows
        o = undefined;
      }
      if (!o) {
        o = opened(gatewayId, outboxId);
        open.set(key, o);
      }
      o.seqs.push(seq);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
      return o.sent;
    },
  };
}
