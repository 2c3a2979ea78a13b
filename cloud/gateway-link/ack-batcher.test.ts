import { describe, expect, it } from "vitest";
import { createAckBatcher } from "./ack-batcher.ts";

describe("ack batcher", () => {
  it("acknowledges what a gateway's batch settled in one turn as one ack per gateway and outbox", async () => {
    const sent: [string, number[], string | undefined][] = [];
    const acks = createAckBatcher({
      ack: (gatewayId, seqs, outboxId) => {
        sent.push([gatewayId, seqs, outboxId]);
        return Promise.resolve();
      },
    });
    const all = [
      acks.ack("gw-1", 1, "ob"),
      acks.ack("gw-2", 7, ""),
      acks.ack("gw-1", 2, "ob"),
      acks.ack("gw-1", 3, "other"),
      acks.ack("gw-1", 4, "ob"),
    ];
    await Promise.all(all);
    expect(sent).toEqual([
      ["gw-1", [1, 2, 4], "ob"],
      ["gw-2", [7], ""],
      ["gw-1", [3], "other"],
    ]);
    await acks.ack("gw-1", 5, "ob");
    expect(sent.at(-1)).toEqual(["gw-1", [5], "ob"]);
  });

  it("a failed publish fails the ack of every seq it carried", async () => {
    const acks = createAckBatcher({ ack: () => Promise.reject(new Error("broker gone")) });
    const results = await Promise.allSettled([acks.ack("gw-1", 1, ""), acks.ack("gw-1", 2, "")]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });

  it("never puts more seqs in one ack than the wire allows", async () => {
    const sizes: number[] = [];
    const acks = createAckBatcher({
      ack: (_g, seqs) => {
        sizes.push(seqs.length);
        return Promise.resolve();
      },
    });
    await Promise.all(Array.from({ length: 1_500 }, (_, i) => acks.ack("gw-1", i + 1, "")));
    expect(sizes).toEqual([1_000, 500]);
  });
});
