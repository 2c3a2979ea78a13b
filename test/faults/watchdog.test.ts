import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { type DaemonSite, startDaemonSite } from "./support/daemon.ts";
import { type NotifySocket, startNotifySocket } from "./support/notify-socket.ts";

// The daemon frozen (SIGSTOP) for longer than its watchdog: systemd's stand-in sees the pings stop, kills it
// with SIGKILL and starts it again, as WatchdogSec= with Restart=on-failure does; what waited in its outbox
// goes up once after the restart.
const WATCHDOG_USEC = 3_000_000;
const SOURCE = "bus0/1/3";

/** systemd's watchdog: no WATCHDOG=1 for WATCHDOG_USEC since the last ping (or READY=1) → SIGKILL, restart. */
function standIn(s: DaemonSite, notify: NotifySocket) {
  const kills: { at: number; signal: string | number | null }[] = [];
  let busy = false;
  const timer = setInterval(async () => {
    const ready = notify.last("READY=1");
    if (busy || ready === null || kills.some((k) => k.at > ready)) return; // armed from READY=1 on
    const since = Math.max(ready, notify.last("WATCHDOG=1") ?? 0);
    if (Date.now() - since <= WATCHDOG_USEC / 1000) return;
    busy = true;
    const exited = s.daemon.exited();
    s.daemon.signal("SIGKILL");
    kills.push({ at: Date.now(), signal: await exited });
    s.daemon.restart();
    busy = false;
  }, 100);
  return { kills, stop: () => clearInterval(timer) };
}

describe("the daemon frozen past its watchdog", () => {
  let s: DaemonSite;
  let notify: NotifySocket;
  let watchdog: ReturnType<typeof standIn>;
  beforeAll(async () => {
    notify = await startNotifySocket();
    s = await startDaemonSite({
      store: "postgres",
      env: { NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: String(WATCHDOG_USEC) },
    });
    watchdog = standIn(s, notify);
  });
  afterAll(async () => {
    watchdog?.stop();
    await s?.stop();
    notify?.close();
  });

  it("is killed and restarted by the watchdog and resends its outbox exactly once", async () => {
    await s.ready();
    await expect.poll(() => notify.count("READY=1"), { timeout: 20_000 }).toBe(1);
    await expect.poll(() => notify.count("WATCHDOG=1"), { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    expect(watchdog.kills).toHaveLength(0); // a healthy daemon pings in time

    // Events wait in the outbox (broker down), then the process freezes.
    await s.mosquitto.kill();
    const board = s.site.sim.board("bus0", 1);
    for (let i = 0; i < 10; i++) board.event(3, i % 2 === 0 ? "door_opened" : "door_closed");
    await expect
      .poll(() => s.daemon.outbox().filter((r) => r.source === SOURCE).length, { timeout: 20_000 })
      .toBe(10);
    const kept = s.daemon.outbox().filter((r) => r.source === SOURCE);
    const pingsBefore = notify.count("WATCHDOG=1");
    const stoppedAt = Date.now();
    s.daemon.signal("SIGSTOP");

    await expect.poll(() => watchdog.kills.length, { timeout: 30_000 }).toBe(1);
    expect(watchdog.kills[0]?.signal).toBe("SIGKILL");
    expect(notify.count("WATCHDOG=1")).toBe(pingsBefore); // no ping while frozen
    await s.mosquitto.restart();
    await expect.poll(() => notify.count("READY=1"), { timeout: 40_000 }).toBe(2);

    const applied = async () =>
      (await hardwareReportRepository(s.site.db).eventsOf("gw-a1")).filter((e) => e.source === SOURCE);
    await expect.poll(async () => (await applied()).length, { timeout: 40_000 }).toBe(10);
    const seqs = (await applied()).map((e) => e.seq).sort((a, b) => a - b);
    expect(seqs).toEqual(kept.map((r) => r.seq));
    await expect.poll(() => s.daemon.outbox().length, { timeout: 20_000 }).toBe(0);
    await expect.poll(() => notify.count("WATCHDOG=1"), { timeout: 20_000 }).toBeGreaterThan(pingsBefore);
    expect(watchdog.kills).toHaveLength(1);
    console.info(
      `watchdog: sent 10, delivered ${seqs.length}, duplicated ${seqs.length - new Set(seqs).size}; ` +
        `killed ${(watchdog.kills[0]?.at ?? 0) - stoppedAt} ms after SIGSTOP, delivered ${Date.now() - stoppedAt} ms after`,
    );
  });
});
