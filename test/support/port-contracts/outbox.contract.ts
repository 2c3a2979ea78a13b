import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Outbox, OutboxPosition, Pending } from "../../../gateway/ports.ts";
import { UpMessage } from "../../../shared/wire/messages.ts";
import { FakeClock } from "../fake-clock.ts";

export const CONTRACT_GATEWAY = "gw-contract";

/** How an outbox under test is made: empty, for CONTRACT_GATEWAY, on the given clock. */
export type OutboxRig = {
  open(clock: FakeClock): Outbox & OutboxPosition;
  dispose(): void;
};

const event = (detail = ""): Pending => ({
  type: "hardware_event",
  device_id: "11111111-1111-4111-8111-111111111111",
  source: "main/1/1",
  event: "door_opened",
  detail,
});

const OTHER_OUTBOX = "0b9f1c2e-5d7a-4e3b-9c1d-2f4a6b8c0d1e";

/**
 * The outbox port's contract (STYLE rule 7), what the outbox pump, the heartbeat and parkctl rely on, run
 * against every outbox: contiguous seqs never reused, each message stamped as a complete wire message with
 * the outbox's identity, `pending` oldest first after a seq, `confirm` removing exactly the named rows of this
 * identity, `unconfirmedFrom` and `depth` as the heartbeat reports them, and `appended` told after the write.
 */
export function outboxContract(name: string, makeRig: () => OutboxRig): void {
  describe(`outbox contract: ${name}`, () => {
    let rig: OutboxRig;
    let clock: FakeClock;
    let outbox: Outbox & OutboxPosition;

    beforeEach(() => {
      rig = makeRig();
      clock = new FakeClock();
      outbox = rig.open(clock);
    });

    afterEach(() => rig.dispose());

    it("assigns contiguous increasing seqs and stamps gateway, identity and observed_at", () => {
      const a = outbox.append(event("a"));
      clock.advance(1_000);
      const b = outbox.append(event("b"));
      const c = outbox.append({ ...event("c"), observed_at: "2025-12-31T23:59:59.000Z" });
      expect([a.seq, b.seq, c.seq]).toEqual([1, 2, 3]);
      expect(a).toMatchObject({ gateway_id: CONTRACT_GATEWAY, observed_at: "2026-01-15T10:00:00.000Z" });
      expect(a.outbox_id).toBe(outbox.id);
      expect(b.observed_at).toBe("2026-01-15T10:00:01.000Z");
      expect(c.observed_at).toBe("2025-12-31T23:59:59.000Z");
      for (const m of outbox.pending()) expect(UpMessage.safeParse(m).success).toBe(true);
    });

    it("never reuses a seq after its row was confirmed", () => {
      for (let i = 0; i < 3; i++) outbox.append(event());
      expect(outbox.confirm([1, 2, 3])).toBe(3);
      expect(outbox.stats()).toEqual({ pending: 0, oldest: null });
      expect(outbox.append(event()).seq).toBe(4);
    });

    it("pending(after) returns only later rows, oldest first, up to the limit", () => {
      for (let i = 1; i <= 5; i++) outbox.append(event(`m${i}`));
      expect(outbox.pending().map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(outbox.pending(2).map((m) => m.seq)).toEqual([3, 4, 5]);
      expect(outbox.pending(2, 2).map((m) => m.seq)).toEqual([3, 4]);
      expect(outbox.pending(5)).toEqual([]);
      outbox.confirm([3]);
      expect(outbox.pending(1).map((m) => m.seq)).toEqual([2, 4, 5]);
    });

    it("confirm removes exactly the named rows and counts only those still present", () => {
      for (let i = 0; i < 4; i++) outbox.append(event());
      expect(outbox.confirm([2, 4, 99])).toBe(2);
      expect(outbox.pending().map((m) => m.seq)).toEqual([1, 3]);
      expect(outbox.confirm([2])).toBe(0); // a repeated ack is harmless
      expect(outbox.rows().map((r) => [r.seq, r.type])).toEqual([
        [1, "hardware_event"],
        [3, "hardware_event"],
      ]);
      expect(outbox.stats()).toEqual({ pending: 2, oldest: "2026-01-15T10:00:00.000Z" });
    });

    it("an ack naming another outbox confirms nothing; one naming this outbox, or none, confirms by seq", () => {
      for (let i = 0; i < 4; i++) outbox.append(event());
      expect(outbox.confirm([1, 2], OTHER_OUTBOX)).toBe(0);
      expect(outbox.pending().map((m) => m.seq)).toEqual([1, 2, 3, 4]);
      expect(outbox.confirm([1, 2], outbox.id)).toBe(2);
      expect(outbox.confirm([3])).toBe(1); // a cloud from before outbox identities
      expect(outbox.pending().map((m) => m.seq)).toEqual([4]);
    });

    it("unconfirmedFrom is the oldest row still here, else one past the last seq ever given", () => {
      expect(outbox.unconfirmedFrom()).toBe(1);
      for (let i = 0; i < 4; i++) outbox.append(event());
      outbox.confirm([2, 3]);
      expect(outbox.unconfirmedFrom()).toBe(1); // 1 may still be sent
      outbox.confirm([1]);
      expect(outbox.unconfirmedFrom()).toBe(4);
      outbox.confirm([4]);
      expect(outbox.unconfirmedFrom()).toBe(5); // empty, and seq 5 is the next one
    });

    it("depth is how many rows it holds, as appends and confirms change it", () => {
      expect(outbox.depth()).toBe(0);
      for (let i = 0; i < 4; i++) outbox.append(event());
      expect(outbox.depth()).toBe(4);
      outbox.confirm([2, 4, 99]);
      expect(outbox.depth()).toBe(2);
      outbox.confirm([1, 3], OTHER_OUTBOX); // confirms nothing here
      outbox.confirm([2]); // a repeated ack
      expect(outbox.depth()).toBe(2);
      outbox.append(event());
      expect(outbox.depth()).toBe(outbox.stats().pending);
      outbox.confirm([1, 3, 5], outbox.id);
      expect(outbox.depth()).toBe(0);
    });

    it("tells listeners a row was appended, after the write", async () => {
      const seen: number[] = [];
      const listener = () => seen.push(outbox.stats().pending);
      outbox.on("appended", listener);
      outbox.append(event());
      expect(seen).toEqual([]); // deferred to a microtask, so an outer transaction commits first
      await Promise.resolve();
      expect(seen).toEqual([1]);
      outbox.off("appended", listener);
      outbox.append(event());
      await Promise.resolve();
      expect(seen).toEqual([1]);
    });
  });
}
