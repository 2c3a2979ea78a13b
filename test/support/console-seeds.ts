import { sessionRepository } from "../../cloud/sessions/session-repository.ts";
import type { Command } from "../../shared/api/command.ts";
import type { ConsoleSite } from "./console-site.ts";
import { CLIENTS, fx, OP_A } from "./fixture-site.ts";
import { gatewayReports } from "./gateway-reports.ts";
import { rider, riderFlow } from "./rider-sessions.ts";

/** What the console's views show once seeded: the ids their addresses name. */
export type ConsoleSeeds = { locationId: string; deviceId: string; sessionId: string; alarmDevice: string };

/**
 * Something on every view of the fixture site's console: a force-locked locker (its timeline and the audit
 * log have an entry), a rider's active session on another locker, and a tamper alarm on the first.
 */
export async function seedConsole(site: ConsoleSite): Promise<ConsoleSeeds> {
  const h = site.h;
  const locker = fx.device("L1", "1");
  const priced = fx.device("L1", "2");
  // Sequence numbers far from those of other helpers on the same gateway.
  const gw = gatewayReports(() => h, 200_000);
  const res = await h.call(CLIENTS.admin, {
    method: "POST",
    url: `/device/v1/devices/${locker}/commands`,
    payload: { command: "force-lock" },
  });
  if (res.statusCode !== 200) throw new Error(`force-lock refused: ${res.body}`);
  await gw.progress("gw-a1", res.json<Command>(), "SUCCESS", { lock_state: "LOCKED" });
  h.clock.advance(20_000);

  const alice = await rider(h, OP_A, "alice");
  await riderFlow(h).lock(alice, priced);
  const [session] = await sessionRepository(h.db).onDevice(priced, ["active"]);
  if (!session) throw new Error("the rider's lock opened no session");

  await h.report("gw-a1", {
    type: "hardware_event",
    gateway_id: "gw-a1",
    seq: gw.nextSeq(),
    observed_at: h.clock.now().toISOString(),
    device_id: locker,
    source: "bus0/1/1",
    event: "tamper",
    detail: "",
  });
  return { locationId: fx.location("L1"), deviceId: locker, sessionId: session.id, alarmDevice: "1" };
}
