import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DaemonSite, startDaemonSite } from "./support/daemon.ts";
import { type NotifySocket, startNotifySocket } from "./support/notify-socket.ts";

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

// `systemctl stop` right after the start: SIGTERM the moment READY=1 arrives is the graceful stop (STOPPING=1,
// exit 0), never a death by the signal, which a listener installed after READY=1 left it.
describe("the gateway daemon stopped right after it said it was ready", () => {
  let s: DaemonSite;
  let notify: NotifySocket;
  let ready: Promise<void>;
  beforeAll(async () => {
    notify = await startNotifySocket();
    ready = notify.next("READY=1");
    s = await startDaemonSite({ store: "postgres", env: { NOTIFY_SOCKET: notify.path } });
  });
  afterAll(async () => {
    await s?.stop();
    notify?.close();
  });

  it("stops on SIGTERM as READY=1 arrives and exits 0", async () => {
    await ready;
    const stopping = notify.next("STOPPING=1");
    s.daemon.signal("SIGTERM");
    expect(await s.daemon.exited()).toBe(0);
    await stopping;
  });
});
