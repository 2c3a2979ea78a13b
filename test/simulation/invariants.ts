import type { LightMyRequestResponse } from "fastify";
import { deliveredExactlyOnce, readOutboxLedger } from "./delivery-invariants.ts";
import type { GrantHistory } from "./key-edits.ts";
import { keysConverged } from "./key-invariants.ts";
import { type LatchChange, sessionsFollowTheLatches } from "./session-invariants.ts";
import { deviceAlias, deviceId, LOCKERS, RIDERS, START, WEBHOOK_ENDPOINT } from "./sim-site.ts";
import { type Decided, tapsFollowTheRule } from "./tap-invariants.ts";
import { webhooksDelivered } from "./webhook-invariants.ts";
import type { World } from "./world.ts";

/** A latch movement a board was asked for (retries of one request share its seq). */
export type Movement = {
  gateway: string;
  channel: number;
  action: "lock" | "unlock";
  seq: number;
  at: number;
  /** The device when it is not the locker on `channel` (a door's strike). */
  device?: string;
};

type Api = (method: "GET" | "POST", url: string) => Promise<LightMyRequestResponse>;

export type CommandRow = {
  id: string;
  device_id: string;
  name: string;
  state_value: string;
  requested_by: string;
  created_at: string;
  /** When it ended (its row's last change). */
  updated_at: string;
  expires: number;
};

const ACTION: Record<string, "lock" | "unlock" | undefined> = {
  lock: "lock",
  "force-lock": "lock",
  unlock: "unlock",
  "force-unlock": "unlock",
};

/**
 * A tap a daemon received on a locker's reader, from `at` to `until` (virtual ms), when it decided it; the
 * action decided, or null when the daemon stopped before deciding (the next one recovers the decision).
 */
export type Tap = { device_id: string; at: number; until: number; action: "lock" | "unlock" | null };

/** How long after a tap left undecided (its daemon stopped) the hardware may still have been asked to move. */
export const UNDECIDED_TAP_MS = 30_000;

type Candidate = { device: string; action: "lock" | "unlock" | null; start: number; end: number; id: string };

/**
 * Every latch movement belongs to a distinct command of the same action whose deadline had not passed, or
 * to a distinct tap on that locker's reader that decided that action, between the tap and its decision:
 * no movement after a deadline (F7), none without a command or a tap, at most one per command (S31, F8) and
 * per tap. Earliest deadline first matches intervals to points optimally, so a failure here is a real one.
 */
export function unmatchedMovements(
  movements: Movement[],
  commands: CommandRow[],
  taps: Tap[] = [],
): string[] {
  const failures: string[] = [];
  const candidates: Candidate[] = [];
  for (const c of commands) {
    const action = ACTION[c.name];
    if (action)
      candidates.push({
        device: c.device_id,
        action,
        start: Date.parse(c.created_at),
        end: c.expires,
        id: c.id,
      });
  }
  for (const [i, t] of taps.entries())
    candidates.push({ device: t.device_id, action: t.action, start: t.at, end: t.until, id: `tap${i}` });
  candidates.sort((a, b) => a.end - b.end);
  const used = new Set<string>();
  const distinct = new Map<string, Movement>();
  for (const m of movements) {
    const k = `${m.gateway}/${m.channel}/${m.action}/${m.seq}`;
    distinct.set(k, distinct.get(k) ?? m);
  }
  const sorted = [...distinct.values()].sort((a, b) => a.at - b.at);
  for (const m of sorted) {
    const device = m.device ?? deviceId(deviceAlias(m.gateway, m.channel));
    const match = candidates.find(
      (c) =>
        c.device === device &&
        (c.action === null || c.action === m.action) &&
        !used.has(c.id) &&
        c.start <= m.at &&
        m.at <= c.end,
    );
    if (match) used.add(match.id);
    else
      failures.push(
        `${m.device ? `the door strike of ${m.gateway}` : `latch ${m.gateway} ch${m.channel}`} moved (${m.action}, seq ${m.seq}) at ${new Date(m.at).toISOString()} with no live command or tap left to account for it`,
      );
  }
  return failures;
}

/**
 * A rider never releases what someone else holds: every rider's unlock that ended SUCCESS was asked for
 * while the locker's last successful lock was that rider's own and nothing had freed it since. Who locked
 * comes from the commands alone, so the cloud's ownership rule is judged by what it let through.
 */
export function ridersReleasedOnlyTheirOwn(commands: CommandRow[], riders: Set<string>): string[] {
  const failures: string[] = [];
  const ended = commands.filter((c) => c.state_value === "SUCCESS");
  for (const u of ended) {
    if (ACTION[u.name] !== "unlock" || !riders.has(u.requested_by)) continue;
    const asked = Date.parse(u.created_at);
    const before = ended
      .filter(
        (c) =>
          c.device_id === u.device_id && c.id !== u.id && ACTION[c.name] && Date.parse(c.updated_at) < asked,
      )
      .sort((a, b) => Date.parse(b.updated_at) - Date.parse(a.updated_at))[0];
    // A lock by the operator leaves whose it is to the cloud's record: only another rider's lock is judged.
    const heldByAnother = riders.has(before?.requested_by ?? "") && before?.requested_by !== u.requested_by;
    if (before && ACTION[before.name] === "lock" && heldByAnother)
      failures.push(
        `rider ${u.requested_by} unlocked device ${u.device_id} (command ${u.id}) held by ${before.requested_by} (command ${before.id})`,
      );
  }
  return failures;
}

/** After the world runs quiet, the cloud has every running gateway online. */
async function gatewaysOnline(w: World): Promise<string[]> {
  const ids = [...w.gateways.keys()];
  const offline = await w.db
    .selectFrom("gateways")
    .select("id")
    .where("id", "in", ids)
    .where("online", "=", 0)
    .execute();
  return offline.map((g) => `${g.id}: running, and the cloud has it offline`);
}

/** The invariants judged at the end of a run, after the faults healed and the world ran quiet. */
export async function checkInvariants(
  w: World,
  api: Api,
  seen: {
    movements: Movement[];
    taps: Tap[];
    decided: Decided[];
    latches: LatchChange[];
    cycles?: Tap[];
    history?: GrantHistory;
  },
  note: (line: string) => void,
): Promise<string[]> {
  const rows = await w.db
    .selectFrom("commands")
    .select([
      "id",
      "device_id",
      "name",
      "state_value",
      "requested_by",
      "created_at",
      "updated_at",
      "wire_request",
    ])
    .execute();
  const commands: CommandRow[] = rows.map((r) => {
    const wire = (typeof r.wire_request === "string" ? JSON.parse(r.wire_request) : r.wire_request) as {
      expires_at?: string;
    } | null;
    return { ...r, expires: wire?.expires_at ? Date.parse(wire.expires_at) : Number.POSITIVE_INFINITY };
  });
  const riders = new Set(RIDERS.map((r) => r.id));
  const names = new Map(
    [...w.gateways.keys()].flatMap((g) =>
      Array.from(
        { length: LOCKERS },
        (_, i) => [deviceId(deviceAlias(g, i + 1)), deviceAlias(g, i + 1)] as const,
      ),
    ),
  );
  const nameOf = (device: string) => names.get(device) ?? device;
  const ledgers = [...w.gateways.values()].map((g) => readOutboxLedger(g.id, w.storeFile(g)));
  for (const l of ledgers) note(`end ${l.gateway} outbox ${l.lastSeq} given ${l.pending} pending`);
  const posts = w.hooks.received;
  note(`end hooks ${new Set(posts.map((p) => p.id)).size} messages taken in ${posts.length} posts`);
  const failures = [
    ...unmatchedMovements(seen.movements, commands, seen.taps),
    ...(await deliveredExactlyOnce(w.db, ledgers)),
    ...(await webhooksDelivered(w.db, WEBHOOK_ENDPOINT, w.hooks.received)),
    ...(await tapsFollowTheRule(w.db, seen.decided, seen.history)),
    ...(await keysConverged(
      w.db,
      [...w.gateways.values()].map((g) => ({ id: g.id, file: w.storeFile(g) })),
      Date.now(),
    )),
    ...ridersReleasedOnlyTheirOwn(commands, riders),
    ...(await sessionsFollowTheLatches(w.db, { ...seen, commands, riders }, nameOf, START, Date.now())),
  ];
  for (const c of [...commands].sort((a, b) => a.id.localeCompare(b.id)))
    note(`end ${c.id} ${c.name} ${c.state_value}`);
  for (const c of commands)
    if (c.state_value !== "SUCCESS" && c.state_value !== "ERROR")
      failures.push(`command ${c.id} (${c.name}) still ${c.state_value} after the world ran quiet`);
  failures.push(...(await gatewaysOnline(w)));
  for (const g of w.gateways.values())
    for (let ch = 1; ch <= LOCKERS; ch++) {
      const latch = g.hardware.board("bus0", 1).channel(ch).latch === "locked" ? "LOCKED" : "UNLOCKED";
      const alias = deviceAlias(g.id, ch);
      const device = (await api("GET", `/device/v1/devices/${deviceId(alias)}`)).json();
      note(`end ${alias} latch ${latch} lock_state ${device.lock_state} state ${device.state?.value}`);
      // Heartbeats every 5 s, the last faults healed 90 s ago: every device is heard of, and healthy.
      if (device.heartbeat_v2?.health !== "HEALTHY")
        failures.push(`${alias}: the cloud says its health is ${device.heartbeat_v2?.health}`);
      if (device.lock_state !== latch)
        failures.push(`${alias}: the cloud says lock_state ${device.lock_state}, the latch is ${latch}`);
    }
  return failures;
}
