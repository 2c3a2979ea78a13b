import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DaemonSite, startDaemonSite } from "./support/daemon.ts";

// The fault suite's ground: the daemon as a process of its own reaches the cloud, dies by SIGKILL with its
// store intact, and comes back from the same files.
describe("the gateway daemon as its own process", () => {
  let s: DaemonSite;
  beforeAll(async () => {
    s = await startDaemonSite({ store: "postgres" });
  });
  afterAll(() => s?.stop());

  it("reports through the broker, survives SIGKILL with its store intact, and reports again", async () => {
    await s.ready();
    await s.daemon.kill();
    expect(s.daemon.quickCheck()).toBe("ok");
    s.daemon.restart();
    await s.ready(40_000, 7);
    await expect.poll(() => s.daemon.outbox().length, { timeout: 20_000 }).toBe(0);
  });
});
