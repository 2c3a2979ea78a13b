import pino from "pino";
import { describe, expect, it } from "vitest";
import { type ApplyMessage, createGatewayChains, type HandedOn } from "./gateway-chains.ts";

const log = pino({ level: "silent" });
const t = (channel: string) => ({ gatewayId: "gw-1", channel });

/** A promise settled from outside. */
function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const settle = () => new Promise<void>((r) => setImmediate(r));

/**
 * Chains whose `apply` hands on messages whose payload is "report" (each applied when the test says) and
 * applies the others once their earlier ones are: what gateway-messages.ts does with device reports.
 */
function harness() {
  const started: string[] = [];
  const applied: string[] = [];
  const pending = new Map<string, ReturnType<typeof deferred>>();
  const apply: ApplyMessage = (_topic, raw, earlier) => {
    const name = raw.toString();
    started.push(name);
    const d = deferred();
    pending.set(name, d);
    if (name.startsWith("report")) return { applied: d.promise } satisfies HandedOn;
    return earlier.then(() => d.promise);
  };
  const chains = createGatewayChains({
    limit: { messages: 100, bytes: 1_000_000 },
    log,
    refused: () => {},
    apply,
    onApplied: (_gw, channel) => applied.push(channel),
  });
  const send = (name: string) => chains.accept(`x/${name}`, Buffer.from(name), t(name));
  const done = (name: string) => pending.get(name)?.resolve();
  return {
    chains,
    started,
    applied,
    send,
    done,
    fail: (name: string) => pending.get(name)?.reject(new Error("no")),
  };
}

describe("gateway chains", () => {
  it("starts a gateway's next report before the previous is applied, and tells them applied in order", async () => {
    const h = harness();
    h.send("report-1");
    h.send("report-2");
    h.send("report-3");
    await settle();
    expect(h.started).toEqual(["report-1", "report-2", "report-3"]);
    expect(h.applied).toEqual([]);
    h.done("report-3");
    h.done("report-2");
    await settle();
    expect(h.applied).toEqual([]); // report-1 is not applied yet
    h.done("report-1");
    await settle();
    expect(h.applied).toEqual(["report-1", "report-2", "report-3"]);
  });

  it("a message that is not handed on waits for the reports before it, and the next waits for it", async () => {
    const h = harness();
    h.send("report-1");
    h.send("status");
    h.send("report-2");
    await settle();
    expect(h.started).toEqual(["report-1", "status"]);
    h.done("status"); // ready, but its earlier report is not applied
    await settle();
    expect(h.started).toEqual(["report-1", "status"]);
    h.done("report-1");
    await settle();
    expect(h.started).toEqual(["report-1", "status", "report-2"]);
    expect(h.applied).toEqual(["report-1", "status"]);
    h.done("report-2");
    await Promise.all(h.chains.inFlight());
    expect(h.applied).toEqual(["report-1", "status", "report-2"]);
  });

  it("a report that fails is not told applied, and those after it still are", async () => {
    const h = harness();
    h.send("report-1");
    h.send("report-2");
    await settle();
    h.fail("report-1");
    h.done("report-2");
    await Promise.all(h.chains.inFlight());
    expect(h.applied).toEqual(["report-2"]);
    expect(h.chains.inFlight()).toEqual([]);
  });

  it("logs a message that fails while the cloud stops at info, as expected; an error otherwise", async () => {
    const lines: { level: number; msg: string }[] = [];
    const capture = pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    let stopping = false;
    const chains = createGatewayChains({
      limit: { messages: 100, bytes: 1_000_000 },
      log: capture,
      refused: () => {},
      apply: () => Promise.reject(new Error("client disconnecting")),
      stopping: () => stopping,
    });
    chains.accept("x/up", Buffer.from("up"), t("up"));
    await Promise.all(chains.inFlight());
    stopping = true;
    chains.accept("x/up", Buffer.from("up"), t("up"));
    await Promise.all(chains.inFlight());
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [50, "failed to apply a gateway message"],
      [30, "a gateway message left to the next start"],
    ]);
  });
});
