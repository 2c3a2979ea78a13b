import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createSimSite, type SimSite } from "../../hardware-sim/site.ts";
import { parseReaderLine, type ReaderLine } from "../../shared/protocol/rfid-reader/reader-line.ts";
import { FakeClock } from "../support/fake-clock.ts";

const settle = async (turns = 5) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

/** Reads CR LF lines off a reader link and parses them as the gateway will. */
function lines(link: Duplex): ReaderLine[] {
  const out: ReaderLine[] = [];
  let buf = "";
  link.on("data", (chunk: Buffer) => {
    buf += chunk.toString("latin1");
    for (let i = buf.indexOf("\r\n"); i >= 0; i = buf.indexOf("\r\n")) {
      out.push(parseReaderLine(buf.slice(0, i)));
      buf = buf.slice(i + 2);
    }
  });
  return out;
}

let site: SimSite | null = null;
afterEach(async () => {
  await site?.close();
  site = null;
});

describe("simulated RFID reader", () => {
  it("greets with HELLO when opened and prints one TAG line per tap", async () => {
    site = createSimSite({ readers: { "reader-1": { model: "RC522", firmware: "2.1", aliveMs: false } } });
    const link = await site.linkFactory("sim://reader-1", 9600);
    const got = lines(link);
    site.reader("reader-1").tap("04:a1:b2:c3");
    site.reader("reader-1").tap("DEADBEEF");
    await settle();
    expect(got).toEqual([
      { kind: "hello", model: "RC522", firmware: "2.1" },
      { kind: "tap", card: "04a1b2c3" },
      { kind: "tap", card: "deadbeef" },
    ]);
    expect(site.reader("reader-1").sent).toEqual(["HELLO RC522 2.1", "TAG 04:A1:B2:C3", "TAG DEADBEEF"]);
  });

  it("prints ALIVE after each idle interval, and a tap restarts the wait", async () => {
    const clock = new FakeClock();
    site = createSimSite({ readers: { r: { aliveMs: 5_000 } } }, { timers: clock });
    const got = lines(await site.linkFactory("sim://r"));
    clock.advance(4_000);
    site.reader("r").tap("0102");
    clock.advance(4_999);
    await settle();
    expect(got.map((l) => l.kind)).toEqual(["hello", "tap"]);
    clock.advance(1);
    clock.advance(5_000);
    await settle();
    expect(got.map((l) => l.kind)).toEqual(["hello", "tap", "alive", "alive"]);
  });

  it("sends line noise the gateway must treat as garbage", async () => {
    site = createSimSite({ readers: { r: { aliveMs: false } } });
    const got = lines(await site.linkFactory("sim://r"));
    site.reader("r").sendLine("\x15#?TAG");
    await settle();
    expect(got.at(-1)).toEqual({ kind: "garbage", line: "\x15#?TAG" });
  });

  it("closes the host's link when unplugged, refuses to reopen until plugged back, then greets again", async () => {
    site = createSimSite({ readers: { r: { aliveMs: false } } });
    const reader = site.reader("r");
    const first = await site.linkFactory("sim://r");
    const closed = new Promise<void>((res) => first.once("close", () => res()));
    await reader.unplug();
    await closed;
    expect(reader.isPlugged).toBe(false);
    await expect(site.linkFactory("sim://r")).rejects.toThrow(/ENOENT/);
    reader.tap("0a0b"); // nobody hears a tap on an unplugged reader
    await reader.plugIn();
    const got = lines(await site.linkFactory("sim://r"));
    await settle();
    expect(got).toEqual([{ kind: "hello", model: "SIM-RFID", firmware: "1.0" }]);
  });

  it("lets the gateway close and reopen its port, but not hold it open twice", async () => {
    site = createSimSite({ readers: { r: { aliveMs: false } } });
    const first = await site.linkFactory("sim://r");
    await expect(site.linkFactory("sim://r")).rejects.toThrow(/EBUSY/);
    first.destroy();
    const again = lines(await site.linkFactory("sim://r"));
    site.reader("r").tap("ff");
    await settle();
    expect(again.map((l) => l.kind)).toEqual(["hello", "tap"]);
  });
});
