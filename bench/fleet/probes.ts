/**
 * What the fleet bench measures from outside the cloud: commands and location lists through the HTTP API
 * at a fixed arrival rate (open loop: a slow answer never delays the next request, so queueing shows in
 * the figures instead of hiding), and how long a heartbeat takes to reach the store.
 */
import pg from "pg";
import { gatewayId, LOCKERS_PER_GATEWAY, lockerId, operatorOf } from "./fleet-shape.ts";

export const max = (xs: number[]): number => (xs.length ? Math.max(...xs) : Number.NaN);

export const pct = (xs: number[], p: number): number => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};

/** Calls `fn` `ratePerS` times a second until stopped, without waiting for earlier calls to finish. */
export function openLoop(ratePerS: number, fn: () => Promise<void>) {
  const inFlight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const p = fn().finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, 1000 / ratePerS);
  return {
    async stop(): Promise<void> {
      clearInterval(timer);
      await Promise.allSettled([...inFlight]);
    },
  };
}

export type Tally = { latencies: number[]; failures: Map<string, number> };
const tally = (): Tally => ({ latencies: [], failures: new Map() });

type CommandEvent = { name: string; timestamp: string };
/** One command's trip: when it was sent, how long it took, and its events (the cloud's clock). */
export type Trip = { sentAt: number; answeredAt: number; ms: number; events: CommandEvent[] };

/** Where a trip's time went: request → first event, event → event, last event → answer received. */
export function tripStages(t: Trip): string {
  const parts: string[] = [];
  let prev = { name: "sent", at: t.sentAt };
  for (const e of t.events) {
    const at = Date.parse(e.timestamp);
    parts.push(`${prev.name}→${e.name} ${at - prev.at}`);
    prev = { name: e.name, at };
  }
  parts.push(`${prev.name}→answer ${t.answeredAt - prev.at}`);
  return parts.join(", ");
}
const fail = (t: Tally, why: string) => t.failures.set(why, (t.failures.get(why) ?? 0) + 1);
export const failed = (t: Tally) => [...t.failures.values()].reduce((a, b) => a + b, 0);

/** The cloud refuses a second lock or unlock on one device within 3 s; a polite client waits longer. */
const DEVICE_REST_MS = 5_000;

/**
 * POST lock/unlock with `Prefer: wait=10` to a device drawn at random from the whole fleet (none
 * commanded in the last 5 s): the answer is the ended command. Each device alternates lock and unlock,
 * starting from the unlocked state the simulated hardware reports.
 */
export function commandLoad(o: {
  base: string;
  /** Gateways 0 … n−1 are drawn from; during the ramp-up, those up so far (none yet: no command). */
  gateways: number | (() => number);
  tokens: string[];
  ratePerS: number;
}) {
  const t = tally();
  const trips: Trip[] = [];
  const locked = new Set<string>();
  const lastSent = new Map<string, number>();
  const draw = (): { i: number; device: string } | null => {
    const n = typeof o.gateways === "number" ? o.gateways : o.gateways();
    for (let tries = 0; n > 0 && tries < 1_000; tries++) {
      const i = Math.floor(Math.random() * n);
      const device = lockerId(i, 1 + Math.floor(Math.random() * LOCKERS_PER_GATEWAY));
      if (Date.now() - (lastSent.get(device) ?? 0) > DEVICE_REST_MS) return { i, device };
    }
    return null;
  };
  const loop = openLoop(o.ratePerS, async () => {
    const drawn = draw();
    if (!drawn) return;
    const { i, device } = drawn;
    lastSent.set(device, Date.now());
    const name = locked.has(device) ? "unlock" : "lock";
    const t0 = performance.now();
    const sentAt = Date.now();
    try {
      const res = await fetch(`${o.base}/device/v1/devices/${device}/commands`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${o.tokens[operatorOf(i)]}`,
          "content-type": "application/json",
          prefer: "wait=10",
        },
        body: JSON.stringify({ command: name }),
      });
      const body = (await res.json()) as {
        state?: { value: string; reason: string };
        events?: CommandEvent[];
        error_code?: string;
      };
      const ms = performance.now() - t0;
      if (res.status >= 300) return void fail(t, `HTTP ${res.status} ${body.error_code ?? ""}`.trim());
      const state = body.state?.value ?? "?";
      if (state === "ERROR") return void fail(t, `ERROR: ${body.state?.reason ?? ""}`);
      if (state !== "SUCCESS") return void fail(t, `still ${state} when the 10 s wait ended`);
      t.latencies.push(ms);
      trips.push({ sentAt, answeredAt: Date.now(), ms, events: body.events ?? [] });
      if (name === "lock") locked.add(device);
      else locked.delete(device);
    } catch (err) {
      fail(t, `request failed: ${(err as Error).message}`);
    }
  });
  return { tally: t, trips, stop: loop.stop };
}

/** GET /location/v1/locations (an operator's 100 locations) for operators drawn at random. */
export function locationLoad(o: { base: string; tokens: string[]; ratePerS: number }) {
  const t = tally();
  const loop = openLoop(o.ratePerS, async () => {
    const token = o.tokens[Math.floor(Math.random() * o.tokens.length)];
    const t0 = performance.now();
    try {
      const res = await fetch(`${o.base}/location/v1/locations`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await res.arrayBuffer();
      if (res.status !== 200) return void fail(t, `HTTP ${res.status}`);
      t.latencies.push(performance.now() - t0);
    } catch (err) {
      fail(t, `request failed: ${(err as Error).message}`);
    }
  });
  return { tally: t, stop: loop.stop };
}

/**
 * How often a probe looks at the store: every 10 ms at first, then a tenth of the time waited so far (at
 * most every 500 ms), so the lag keeps a 10% resolution and a backlog is not made worse by the probes.
 */
const pollAfter = (waitedMs: number) => Math.min(500, Math.max(10, waitedMs / 10));
/** A heartbeat not in the store after this is counted as never applied. */
const GIVE_UP_MS = 30_000;

/**
 * Heartbeat intake lag: from a simulated gateway publishing a heartbeat (the fleet reports the instant)
 * to the store showing it applied, i.e. its gateway's `heartbeat_at` at or after that instant (the cloud
 * writes its own clock's now when it applies a heartbeat; same machine, same clock). Polled by primary
 * key, so each probe costs the store little; the figure includes the commit.
 */
export function heartbeatProbes(o: { databaseUrl: string }) {
  const pool = new pg.Pool({ connectionString: o.databaseUrl, max: 4 });
  const lags: { at: number; ms: number }[] = [];
  let lost = 0;
  let recording = false;
  const inFlight = new Set<Promise<void>>();

  async function probe(gateway: number, at: number): Promise<void> {
    const since = new Date(at).toISOString();
    const id = gatewayId(gateway);
    for (;;) {
      const r = await pool.query<{ heartbeat_at: string | null }>(
        "SELECT heartbeat_at FROM gateways WHERE id = $1",
        [id],
      );
      const seen = r.rows[0]?.heartbeat_at;
      const now = Date.now();
      if (seen && seen >= since) {
        lags.push({ at, ms: now - at });
        return;
      }
      if (now - at > GIVE_UP_MS) {
        lost++;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, pollAfter(now - at)));
    }
  }

  return {
    lags,
    get lost() {
      return lost;
    },
    /** Probes published while recording are followed to the end, however long they take. */
    onProbe(gateway: number, at: number): void {
      if (!recording) return;
      const p = probe(gateway, at)
        .catch(() => {
          lost++;
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    },
    record(on: boolean) {
      recording = on;
    },
    /** Sampled across the whole fleet: gateways whose last heartbeat applied is older than `staleMs`. */
    async staleness(staleMs: number): Promise<{ stale: number; oldestAgeMs: number }> {
      const r = await pool.query<{ stale: string; oldest: string | null }>(
        `SELECT count(*) FILTER (WHERE heartbeat_at IS NULL OR heartbeat_at < $1) AS stale,
                min(heartbeat_at) AS oldest
           FROM gateways`,
        [new Date(Date.now() - staleMs).toISOString()],
      );
      const row = r.rows[0];
      return {
        stale: Number(row?.stale ?? 0),
        oldestAgeMs: row?.oldest ? Date.now() - Date.parse(row.oldest) : Number.NaN,
      };
    },
    /** Stops taking probes and waits for those under way. */
    async finish(): Promise<void> {
      recording = false;
      await Promise.allSettled([...inFlight]);
    },
    /** Devices seen by the cloud that its connection watch has not recorded yet (first sight). */
    async unwatchedDevices(): Promise<number> {
      const r = await pool.query<{ n: string }>(
        `SELECT (SELECT count(*) FROM devices AS d WHERE d.seen_at IS NOT NULL OR d.offline_at IS NOT NULL
                 OR (d.reachable = 1 AND (SELECT g.heartbeat_at FROM gateways AS g WHERE g.id = d.gateway_id) IS NOT NULL))
              - (SELECT count(*) FROM device_connections) AS n`,
      );
      return Math.max(0, Number(r.rows[0]?.n ?? 0));
    },
    async close(): Promise<void> {
      recording = false;
      await Promise.allSettled([...inFlight]);
      await pool.end();
    },
  };
}
