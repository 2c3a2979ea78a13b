import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { keySyncRepository } from "../../cloud/key-sync/key-sync-repository.ts";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { type DaemonSite, startDaemonSite } from "./support/daemon.ts";
import { accessSite, allDelivered, duplicates, upTo } from "./support/delivery.ts";
import { FaultProxy } from "./support/fault-proxy.ts";

// A slow, lossy mobile link for a minute of real work: 50–300 ms per chunk, a few KB/s, a connection reset
// every ~10 s (seeded). Commands go one at a time, round the lockers 2–5; taps and door events flow beside.

const RUN_MS = 60_000;
const WL = "fa000000-0000-4000-8000-000000000002";
const MEMBER = "04a1b2c3d4";
const CHANNELS = [2, 3, 4, 5];
/** A command's last deadline: delivery, then the hardware (cloud/devices/timeouts.ts). */
const LAST_DEADLINE_MS = DEFAULT_COMMAND_TIMEOUTS.deliveryMs + DEFAULT_COMMAND_TIMEOUTS.hardwareMs;
/** The sweeper's round (site harness: 100 ms) and the API's clock reads: what "on time" may be late by. */
const SWEEP_SLACK_MS = 1_000;

type Sent = { id: string; channel: number; kind: "lock" | "unlock"; deadline: number; postedAt: number };
type Ended = Sent & { state: string; endedAt: number; actuations: number[] };

describe("a lossy, slow link (the real daemon behind latency, jitter, resets and a throttle)", () => {
  let s: DaemonSite;
  let proxy: FaultProxy;
  beforeAll(async () => {
    s = await startDaemonSite({
      store: "postgres",
      manifest: accessSite({ whitelist: WL, cards: [MEMBER] }),
      brokerUrlFor: async (url) => {
        const p = await FaultProxy.before(url, 42);
        proxy = p.proxy;
        return p.url;
      },
    });
  });
  afterAll(async () => {
    await s?.stop();
    await proxy?.stop();
  });

  const board = () => s.site.sim.board("bus0", 1);
  const now = () => s.site.clock.now().getTime();

  /** One command, posted and followed to its end (SUCCESS or ERROR, never left in between). */
  async function command(channel: number): Promise<Sent & { state: string; endedAt: number }> {
    const kind = board().channel(channel).latch === "locked" ? "unlock" : "lock";
    const res = await s.site.api("POST", `/device/v1/devices/${fx.device("L1", String(channel))}/commands`, {
      command: kind,
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const sent: Sent = {
      id: body.id,
      channel,
      kind,
      deadline: Date.parse(body.state.timeout_at),
      postedAt: now(),
    };
    const done = await eventually(
      async () => {
        const c = (await s.site.api("GET", `/device/v1/commands/${sent.id}`)).json();
        expect(["SUCCESS", "ERROR"]).toContain(c.state.value);
        return c as { state: { value: string } };
      },
      LAST_DEADLINE_MS + 30_000,
      200,
    );
    // When the cloud was seen to have ended it (its events carry when the hardware acted, which may be
    // long before the report crossed the link).
    return { ...sent, state: done.state.value, endedAt: now() };
  }

  /** Taps and door events beside the commands, until `until`: how many events were made. */
  async function traffic(until: number): Promise<number> {
    let n = 0;
    while (Date.now() < until) {
      board().event(7, n % 2 === 0 ? "door_opened" : "door_closed");
      if (n % 4 === 0) s.site.sim.reader("reader-1").tap(MEMBER);
      n++;
      await sleep(1_000); // the pace of the site, not a wait for anything
    }
    return n;
  }

  it("delivers every event once, ends every command by its deadline, actuates none twice", async () => {
    await s.ready();
    await eventually(async () => {
      const v = await keySyncRepository(s.site.db).versionsOf("gw-a1");
      expect(v.confirmed).toBeGreaterThan(0);
    }, 40_000);
    await allDelivered(s);
    // Every lock/unlock the lockers 2–5 receive, with the cloud's time it arrived.
    const actuations: { channel: number; kind: string; at: number }[] = [];
    board().onRequest((r) => {
      if ((r.kind === "lock" || r.kind === "unlock") && CHANNELS.includes(r.channel))
        actuations.push({ channel: r.channel, kind: r.kind, at: now() });
    });

    proxy.lossy({ latencyMs: 50, jitterMs: 250, bytesPerSecond: 4_096, resetEveryMs: 10_000 });
    const until = Date.now() + RUN_MS;
    const beside = traffic(until);
    const sent: (Sent & { state: string; endedAt: number })[] = [];
    for (let i = 0; Date.now() < until; i++)
      sent.push(await command(CHANNELS[i % CHANNELS.length] as number));
    const events = await beside;
    proxy.heal();
    const d = await allDelivered(s, 90_000);

    // Each actuation belongs to the command of its channel and kind that was posted last before it.
    const ended: Ended[] = sent.map((c) => ({ ...c, actuations: [] }));
    for (const a of actuations) {
      const owner = ended
        .filter((c) => c.channel === a.channel && c.kind === a.kind && c.postedAt <= a.at)
        .at(-1);
      owner?.actuations.push(a.at);
    }
    const success = ended.filter((c) => c.state === "SUCCESS");
    const error = ended.filter((c) => c.state === "ERROR");
    const lateEnd = ended.filter((c) => c.endedAt > c.postedAt + LAST_DEADLINE_MS + SWEEP_SLACK_MS);
    const lateMove = ended.filter((c) => c.actuations.some((at) => at > c.deadline + SWEEP_SLACK_MS));
    console.info(
      `lossy link: ${events} door/tap rounds, ${d.sent} messages sent, ${d.applied.length} applied, ` +
        `${duplicates(d.hardwareEvents).length + duplicates(d.accessEvents).length} duplicated; ` +
        `${ended.length} commands: ${success.length} SUCCESS, ${error.length} ERROR, ${lateEnd.length} late; ` +
        `slowest ${Math.max(...ended.map((c) => c.endedAt - c.postedAt))} ms; ` +
        `${proxy.resets} resets, ${proxy.accepted} connections`,
    );

    expect(d.applied).toEqual(upTo(d.sent));
    const doorEvents = (await hardwareReportRepository(s.site.db).eventsOf("gw-a1")).filter(
      (e) => e.source === "bus0/1/7",
    );
    expect(doorEvents).toHaveLength(events);
    expect(duplicates(d.hardwareEvents)).toEqual([]);
    expect(duplicates(d.accessEvents)).toEqual([]);
    expect(proxy.resets).toBeGreaterThanOrEqual(3);
    expect(ended.length).toBeGreaterThanOrEqual(4);
    expect(lateEnd).toEqual([]);
    expect(lateMove).toEqual([]);
    // A success moved its latch exactly once; an error at most once (moved, but its report came too late).
    expect(success.filter((c) => c.actuations.length !== 1)).toEqual([]);
    expect(error.filter((c) => c.actuations.length > 1)).toEqual([]);
    expect(actuations).toHaveLength(ended.reduce((n, c) => n + c.actuations.length, 0));
  }, 300_000);
});
