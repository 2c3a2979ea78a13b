import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import type { CommandRecord } from "../store/command-record.ts";
import { awaitSettled } from "./await-settled.ts";
import { createSettledNotifier } from "./command-settled.ts";

const ID = "cccccccc-0000-4000-8000-000000000001";

function command(value: CommandRecord["state"]["value"]): CommandRecord {
  return {
    id: ID,
    operator_id: "op",
    device_id: "dev",
    name: "lock",
    requested_by: "client",
    created_at: "2026-01-15T10:00:00.000Z",
    updated_at: "2026-01-15T10:00:00.000Z",
    state: { value, reason: "", timeout_at: null },
    params: { command: "lock" },
    events: [],
    wire_request: null,
  } as CommandRecord;
}

/** A waiter on ID whose reads return `stored` and are counted. */
function waiter(stored: () => CommandRecord) {
  const clock = new FakeClock();
  const settled = createSettledNotifier();
  let reads = 0;
  const read = () => {
    reads++;
    return Promise.resolve(stored());
  };
  const signal = new AbortController().signal;
  const answer = awaitSettled({ clock, settled, pollMs: 250 }, ID, read, { ms: 10_000, signal });
  return { settled, answer, reads: () => reads, clock };
}

describe("awaitSettled", () => {
  it("answers with the command a notice carries, without reading it again", async () => {
    const w = waiter(() => command("SENT"));
    await expect.poll(() => w.settled.waiting()).toBe(1);
    await expect.poll(() => w.clock.pendingTimers()).toBe(2); // read once: its deadline and its next poll
    const ended = command("SUCCESS");
    w.settled.notify(ID, ended);
    expect(await w.answer).toBe(ended);
    expect(w.reads()).toBe(1);
    expect(w.settled.waiting()).toBe(0);
    expect(w.clock.pendingTimers()).toBe(0);
  });

  it("reads on a notice without the command, and on one before its first read has shown it may see it", async () => {
    let stored = command("SENT");
    const w = waiter(() => stored);
    // Before the first read has answered, a notice's command is not taken: the caller may not see it.
    stored = command("ERROR");
    w.settled.notify(ID, command("SUCCESS"));
    const answer = await w.answer;
    expect(answer.state.value).toBe("ERROR");
    expect(w.reads()).toBe(2);
  });
});
