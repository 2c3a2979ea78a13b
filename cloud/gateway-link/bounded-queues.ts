/**
 * What aedes' persistence stores per message: enough of it to weigh it and to know it again (every copy
 * aedes makes of a routed message keeps its broker id and counter).
 */
type StoredPacket = {
  payload?: Buffer | Uint8Array | string;
  brokerId?: string | null;
  brokerCounter?: number;
};
type Sub = { clientId: string };

/** The part of aedes' persistence (aedes-persistence, promise style) that queues QoS 1 messages per client. */
export type OutgoingStore = {
  outgoingEnqueue(sub: Sub, packet: StoredPacket): Promise<void>;
  outgoingEnqueueCombi(subs: Sub[], packet: StoredPacket): Promise<void>;
  outgoingClearMessageId(client: { id: string }, packet: StoredPacket): Promise<StoredPacket | undefined>;
};

export type QueueLimit = { messages: number; bytes: number };

/** Each store's own methods, as they were before it was first wrapped. */
const ownMethods = new WeakMap<OutgoingStore, OutgoingStore>();

/** Messages remembered per client as dropped until their live delivery asks (a client away never asks). */
const REMEMBERED_DROPS = 64;

function weigh(p: StoredPacket): number {
  const payload = p.payload;
  if (payload === undefined) return 0;
  return typeof payload === "string" ? Buffer.byteLength(payload) : payload.byteLength;
}

/**
 * Bounds what the broker holds for one client id: aedes keeps every QoS 1 message for a persistent
 * session (clean: false) from the moment it is routed until the client acknowledges it, in flight or
 * queued while it is away, with no limit of its own. Wraps the store's enqueue and acknowledge calls,
 * counting messages and payload bytes per client id (so across its connections): a message that would
 * take a client over its limit is not queued for it, and `isDropped` tells the broker not to send it live
 * either. Mosquitto does the same with `max_queued_messages` and `max_queued_bytes`.
 */
export function boundQueues(
  store: OutgoingStore,
  deps: {
    /** The limit for a client id; null: unbounded (the cloud's own session). */
    limitFor(clientId: string): QueueLimit | null;
    /** Told of each message not queued for a client. */
    onDrop(clientId: string): void;
  },
) {
  const held = new Map<string, { messages: number; bytes: number }>();
  /** Per client, the messages (broker id/counter) left out of its queue and not yet asked about. */
  const dropped = new Map<string, string[]>();
  const keyOf = (p: StoredPacket) => `${p.brokerId ?? ""}/${p.brokerCounter ?? ""}`;

  function admit(clientId: string, packet: StoredPacket): boolean {
    const limit = deps.limitFor(clientId);
    if (!limit) return true;
    const h = held.get(clientId) ?? { messages: 0, bytes: 0 };
    const bytes = weigh(packet);
    if (h.messages + 1 > limit.messages || h.bytes + bytes > limit.bytes) {
      const keys = dropped.get(clientId) ?? [];
      keys.push(keyOf(packet));
      if (keys.length > REMEMBERED_DROPS) keys.shift();
      dropped.set(clientId, keys);
      deps.onDrop(clientId);
      return false;
    }
    h.messages += 1;
    h.bytes += bytes;
    held.set(clientId, h);
    return true;
  }

  function release(clientId: string, packet: StoredPacket) {
    const h = held.get(clientId);
    if (!h) return;
    h.messages -= 1;
    h.bytes -= weigh(packet);
    if (h.messages <= 0) held.delete(clientId);
  }

  // A store kept across broker restarts is wrapped again over its own methods, not over the last wrapper;
  // what its sessions held before this start is not counted.
  const own = ownMethods.get(store) ?? {
    outgoingEnqueue: store.outgoingEnqueue,
    outgoingEnqueueCombi: store.outgoingEnqueueCombi,
    outgoingClearMessageId: store.outgoingClearMessageId,
  };
  ownMethods.set(store, own);
  const enqueue = own.outgoingEnqueue.bind(store);
  const enqueueCombi = own.outgoingEnqueueCombi.bind(store);
  const clear = own.outgoingClearMessageId.bind(store);
  store.outgoingEnqueue = (sub, packet) =>
    admit(sub.clientId, packet) ? enqueue(sub, packet) : Promise.resolve();
  store.outgoingEnqueueCombi = (subs, packet) => {
    const kept = subs.filter((s) => admit(s.clientId, packet));
    return kept.length > 0 ? enqueueCombi(kept, packet) : Promise.resolve();
  };
  store.outgoingClearMessageId = async (client, packet) => {
    const gone = await clear(client, packet);
    if (gone) release(client.id, gone);
    return gone;
  };

  return {
    /**
     * Whether `packet` was left out of `clientId`'s queue, so it must not be sent to it live either (aedes
     * would fail to mark it sent and close the connection). Asked once per delivery, so it forgets.
     */
    isDropped(clientId: string, packet: StoredPacket): boolean {
      const keys = dropped.get(clientId);
      const i = keys?.indexOf(keyOf(packet)) ?? -1;
      if (!keys || i < 0) return false;
      keys.splice(i, 1);
      if (keys.length === 0) dropped.delete(clientId);
      return true;
    },
    /** What a client id holds now (tests). */
    held: (clientId: string) => ({ ...(held.get(clientId) ?? { messages: 0, bytes: 0 }) }),
  };
}
