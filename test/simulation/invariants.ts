import type { LightMyRequestResponse } from "fastify";
import { deviceAlias, deviceId, LOCKERS, RIDERS } from "./sim-site.ts";
import type { World } from "./world.ts";

/** A latch movement a board was asked for (retries of one request share its seq). */
export type Movement = {
  gateway: string;
  channel: number;
  action: "lock" | "unlock";
  seq: number;
  at: number;
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
 * Every latch movement belongs to a distinct command of the same action whose deadline had not passed:
 * no movement after a deadline (F7), none without a command, at most one per command (S31, F8).
 * Earliest deadline first matches intervals to points optimally, so a failure here is a real one.
 */
export function unmatchedMovements(movements: Movement[], commands: CommandRow[]): string[] {
  const failures: string[] = [];
  const used = new Set<string>();
  const distinct = new Map<string, Movement>();
  for (const m of movements)
    distinct.set(
      `${m.gateway}/${m.channel}/${m.action}/${m.seq}`,
      distinct.get(`${m.gateway}/${m.channel}/${m.action}/${m.seq}`) ?? m,
    );
  const sorted = [...distinct.values()].sort((a, b) => a.at - b.at);
  for (const m of sorted) {
    const device = deviceId(deviceAlias(m.gateway, m.channel));
    const candidates = commands
      .filter((c) => c.device_id === device && ACTION[c.name] === m.action && !used.has(c.id))
      .filter((c) => Date.parse(c.created_at) <= m.at && m.at <= c.expires)
      .sort((a, b) => a.expires - b.expires);
    const match = candidates[0];
    if (match) used.add(match.id);
    else
      failures.push(
        `latch ${m.gateway} ch${m.channel} moved (${m.action}, seq ${m.seq}) at ${new Date(m.at).toISOString()} with no live command left to account for it`,
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

/** The invariants judged at the end of a run, after the faults healed and the world ran quiet. */
export async function checkInvariants(
  w: World,
  api: Api,
  movements: Movement[],
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
  const failures = [
    ...unmatchedMovements(movements, commands),
    ...ridersReleasedOnlyTheirOwn(commands, new Set(RIDERS.map((r) => r.id))),
  ];
  for (const c of [...commands].sort((a, b) => a.id.localeCompare(b.id)))
    note(`end ${c.id} ${c.name} ${c.state_value}`);
  for (const c of commands)
    if (c.state_value !== "SUCCESS" && c.state_value !== "ERROR")
      failures.push(`command ${c.id} (${c.name}) still ${c.state_value} after the world ran quiet`);
  for (const g of w.gateways.values())
    for (let ch = 1; ch <= LOCKERS; ch++) {
      const latch = g.hardware.board("bus0", 1).channel(ch).latch === "locked" ? "LOCKED" : "UNLOCKED";
      const alias = deviceAlias(g.id, ch);
      const device = (await api("GET", `/device/v1/devices/${deviceId(alias)}`)).json();
      note(`end ${alias} latch ${latch} lock_state ${device.lock_state} state ${device.state?.value}`);
      if (device.lock_state !== latch)
        failures.push(`${alias}: the cloud says lock_state ${device.lock_state}, the latch is ${latch}`);
    }
  return failures;
}
