import { describe, expect, it } from "vitest";
import { boundQueues, type OutgoingStore } from "./bounded-queues.ts";

type Stored = { payload: Buffer; brokerId: string; brokerCounter: number; messageId?: number };

/** aedes-persistence's outgoing queues in miniature: per client, in order, cleared by message id. */
function memoryStore() {
  const queues = new Map<string, Stored[]>();
  const enqueue = (clientId: string, packet: object) =>
    queues.set(clientId, [...(queues.get(clientId) ?? []), { ...(packet as Stored) }]);
  const store: OutgoingStore = {
    outgoingEnqueue(sub, packet) {
      enqueue(sub.clientId, packet);
      return Promise.resolve();
    },
    outgoingEnqueueCombi(subs, packet) {
      for (const sub of subs) enqueue(sub.clientId, packet);
      return Promise.resolve();
    },
    outgoingClearMessageId(client, packet) {
      const q = queues.get(client.id) ?? [];
      const i = q.findIndex((p) => p.messageId === (packet as Stored).messageId);
      return Promise.resolve(i < 0 ? undefined : q.splice(i, 1)[0]);
    },
  };
  return { store, queues };
}

let counter = 0;
const packet = (bytes: number): Stored => ({
  payload: Buffer.alloc(bytes),
  brokerId: "b",
  brokerCounter: ++counter,
});

describe("bounded session queues", () => {
  it("queues for a client up to its message and byte limits, tells delivery what it left out, and frees on acknowledgement", async () => {
    const { store, queues } = memoryStore();
    const drops: string[] = [];
    const q = boundQueues(store, {
      limitFor: (id) => (id === "cloud" ? null : { messages: 3, bytes: 250 }),
      onDrop: (id) => drops.push(id),
    });
    const sent = [packet(100), packet(100), packet(100), packet(10)];
    for (const p of sent) await store.outgoingEnqueueCombi([{ clientId: "gw" }, { clientId: "cloud" }], p);
    // The third would take gw over 250 bytes; the fourth fits again.
    expect(queues.get("gw")?.map((p) => p.brokerCounter)).toEqual(
      [sent[0], sent[1], sent[3]].map((p) => p?.brokerCounter),
    );
    expect(queues.get("cloud")).toHaveLength(4);
    expect(q.held("gw")).toEqual({ messages: 3, bytes: 210 });
    expect(drops).toEqual(["gw"]);
    // Delivery asks once per copy; a copy made for delivery keeps broker id and counter.
    expect(q.isDropped("gw", { ...(sent[2] as Stored) })).toBe(true);
    expect(q.isDropped("gw", { ...(sent[2] as Stored) })).toBe(false);
    expect(q.isDropped("gw", sent[0] as Stored)).toBe(false);
    expect(q.isDropped("cloud", sent[2] as Stored)).toBe(false);
    // Full by count now: a fifth is left out until one is acknowledged.
    await store.outgoingEnqueue({ clientId: "gw" }, packet(1));
    expect(drops).toHaveLength(2);
    for (const [i, p] of (queues.get("gw") ?? []).entries()) p.messageId = i + 1;
    expect(await store.outgoingClearMessageId({ id: "gw" }, { messageId: 1 } as never)).toBeDefined();
    expect(await store.outgoingClearMessageId({ id: "gw" }, { messageId: 9 } as never)).toBeUndefined();
    expect(q.held("gw")).toEqual({ messages: 2, bytes: 110 });
    await store.outgoingEnqueue({ clientId: "gw" }, packet(1));
    expect(q.held("gw")).toEqual({ messages: 3, bytes: 111 });
  });
});

describe("bounded session queues on a store kept across broker restarts", () => {
  it("wraps the store's own methods again, not the last broker's wrapper: one admission per message", async () => {
    const { store, queues } = memoryStore();
    const limits = { limitFor: () => ({ messages: 2, bytes: 1_000 }), onDrop: () => undefined };
    boundQueues(store, limits);
    await store.outgoingEnqueue({ clientId: "gw" }, packet(10));
    await store.outgoingEnqueue({ clientId: "gw" }, packet(10));
    // The restarted broker's: the last one's full count is gone with it, and what was kept is not counted.
    const q = boundQueues(store, limits);
    await store.outgoingEnqueue({ clientId: "gw" }, packet(10));
    expect(queues.get("gw")).toHaveLength(3);
    expect(q.held("gw")).toEqual({ messages: 1, bytes: 10 });
  });
});
