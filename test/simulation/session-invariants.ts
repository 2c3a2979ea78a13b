import type { Db } from "../../cloud/store/db.ts";
import type { CommandRow } from "./invariants.ts";
import type { Decided } from "./tap-invariants.ts";

/** A latch of a locker turning (virtual ms), as the board's firmware turned it. */
export type LatchChange = { device: string; locked: boolean; at: number };

/**
 * How far a session's times may stray into a time its locker was unlocked: a fact is dated with the
 * gateway's estimate of the cloud's clock, low by the transit time of the message it came from (up to the
 * 10 s a held message takes in this world).
 */
export const SESSION_SLACK_MS = 15_000;

export type SessionRow = {
  id: string;
  device_id: string;
  access_key_id: string | null;
  status: string;
  start_time: string | null;
  end_time: string | null;
  command_id: string | null;
  ended_by: string | null;
};

/** The spans (from, to) a device's latch was open, up to `endAt`; every locker starts open. */
function openSpans(
  changes: LatchChange[],
  device: string,
  startAt: number,
  endAt: number,
): [number, number][] {
  const spans: [number, number][] = [];
  let openedAt: number | null = startAt;
  for (const c of changes) {
    if (c.device !== device) continue;
    if (!c.locked && openedAt === null) openedAt = c.at;
    if (c.locked && openedAt !== null) {
      spans.push([openedAt, c.at]);
      openedAt = null;
    }
  }
  if (openedAt !== null) spans.push([openedAt, endAt]);
  return spans;
}

/**
 * Sessions agree with the device history:
 *  - a session started only by a lock that succeeded (a rider's command) or a card the gateway let lock
 *    that locker (rfid_parking); every rider's lock that succeeded started its session;
 *  - a rider's session is billed (start to end, or to now while active) only for a time its latch was
 *    locked (a technician's test cycle that locked it again aside);
 *  - once the world is quiet, a locker holds at most one active session, and none while its latch is open.
 */
export async function sessionsFollowTheLatches(
  db: Db,
  seen: Seen,
  /** A device's name in the trace (its alias). */
  nameOf: (device: string) => string,
  startAt: number,
  endAt: number,
): Promise<string[]> {
  const sessions: SessionRow[] = await db
    .selectFrom("sessions")
    .select([
      "id",
      "device_id",
      "access_key_id",
      "status",
      "start_time",
      "end_time",
      "command_id",
      "ended_by",
    ])
    .execute();
  return judgeSessions(sessions, seen, nameOf, startAt, endAt);
}

type Seen = {
  commands: CommandRow[];
  riders: Set<string>;
  decided: Decided[];
  latches: LatchChange[];
  /** Technicians' test cycles: the latch opened and locked again within one parkctl call. */
  cycles?: { device_id: string; at: number; until: number }[];
};

/** sessionsFollowTheLatches on the sessions as read. */
export function judgeSessions(
  sessions: SessionRow[],
  seen: Seen,
  nameOf: (device: string) => string,
  startAt: number,
  endAt: number,
): string[] {
  const failures: string[] = [];
  const commands = new Map(seen.commands.map((c) => [c.id, c]));
  const iso = (ms: number) => new Date(ms).toISOString();
  for (const s of sessions) {
    if (s.start_time === null) continue;
    const cmd = s.command_id ? commands.get(s.command_id) : undefined;
    if (s.command_id && (cmd?.name !== "lock" || cmd.state_value !== "SUCCESS"))
      failures.push(
        `session ${s.id} started, but its command ${s.command_id} is ${cmd?.name} ${cmd?.state_value}`,
      );
    if (!s.command_id) {
      const granted = seen.decided.some(
        (d) =>
          d.decision.card_id === s.access_key_id &&
          d.decision.device_id === s.device_id &&
          d.decision.granted &&
          d.decision.action === "lock",
      );
      if (!granted)
        failures.push(`card session ${s.id} of ${s.access_key_id}: no gateway let that card lock`);
    }
    // A card's session is never charged (billing rule 2), and is dated by the gateway's estimate of the
    // cloud's clock at the tap, which is as weak as the freshest message it had (docs/simulation.md).
    if (!s.command_id) continue;
    // An operator's forced end is dated when the operator ends it, on what the cloud knew then: a gateway
    // cut off may later report the latch open before it (docs/decisions/sessions-and-billing.md).
    if (s.ended_by === "operator") continue;
    const from = Date.parse(s.start_time) + SESSION_SLACK_MS;
    const to = (s.end_time ? Date.parse(s.end_time) : endAt) - SESSION_SLACK_MS;
    // A test cycle that locked the latch again is maintenance: the cloud hears where it left the latch
    // (control-impl.ts), and the session it spans goes on.
    const cycled = (a: number, b: number) =>
      (seen.cycles ?? []).some((c) => c.device_id === s.device_id && c.at <= a && b <= c.until);
    for (const [a, b] of openSpans(seen.latches, s.device_id, startAt, endAt))
      if (a < to && b > from && !cycled(a, b))
        failures.push(
          `session ${s.id} (${s.command_id ? `command ${s.command_id}` : `card ${s.access_key_id}`}) is billed from ${s.start_time} to ${s.end_time ? `${s.end_time} (${s.ended_by})` : "now"}, but ${nameOf(s.device_id)}'s latch was open from ${iso(a)} to ${iso(b)}`,
        );
  }
  for (const c of seen.commands)
    if (c.name === "lock" && c.state_value === "SUCCESS" && seen.riders.has(c.requested_by))
      if (!sessions.some((s) => s.command_id === c.id && s.start_time !== null))
        failures.push(`rider ${c.requested_by}'s lock ${c.id} succeeded, and started no session`);
  const devices = new Set([...seen.latches.map((l) => l.device), ...sessions.map((s) => s.device_id)]);
  for (const device of devices) {
    const active = sessions.filter((s) => s.device_id === device && s.status === "active");
    if (active.length > 1)
      failures.push(
        `${nameOf(device)} holds ${active.length} active sessions: ${active
          .map(
            (s) =>
              `${s.id} (${s.command_id ? `command ${s.command_id}` : `card ${s.access_key_id}`}, from ${s.start_time})`,
          )
          .join(", ")}`,
      );
    const open = openSpans(seen.latches, device, startAt, endAt).some(([, b]) => b === endAt);
    if (open && active.length > 0)
      failures.push(`${nameOf(device)}'s latch is open, and it holds active session ${active[0]?.id}`);
  }
  return failures;
}

/** Records each turn of a channel's latch into `out`, whoever turns it: firmware, a brownout, a hand. */
export function watchLatch(
  channel: { latch: string },
  device: string,
  now: () => number,
  out: LatchChange[],
  told: (latch: string) => void = () => {},
) {
  let latch = channel.latch;
  Object.defineProperty(channel, "latch", {
    enumerable: true,
    get: () => latch,
    set(next: string) {
      if (next !== latch) {
        out.push({ device, locked: next === "locked", at: now() });
        told(next);
      }
      latch = next;
    },
  });
}
