import { cardGrantsAt } from "../../cloud/key-sync/key-view.ts";
import type { Db } from "../../cloud/store/db.ts";
import { decideTap, type TapContext } from "../../shared/domain/access-decision.ts";
import type { AccessDecision, Grant } from "../../shared/wire/messages.ts";
import type { GrantHistory } from "./key-edits.ts";
import { deviceId, doorAlias, gatewayIds, KEPT_WHITELIST, locationId } from "./sim-site.ts";

/** A decision a gateway made, as its daemon told it when it went to the outbox (`at`: virtual ms). */
export type Decided = { gateway: string; decision: AccessDecision; at: number };

/** How much later than the tap a decision may be taken: the cloud's answer, the taps queued before it. */
const DECIDE_WINDOW_MS = 30_000;

/** Every state of a locker the gateway may have seen at the tap (the latch as sensed, who parked it). */
function occupancies(card: string): TapContext["occupancy"][] {
  const out: TapContext["occupancy"][] = [];
  for (const locked of [true, false, null])
    for (const parkedBy of [null, card, "someone-else"]) out.push({ locked, parkedBy });
  return out;
}

/** Every booking the gateway may have held for the locker: none, or a rider's (never a card's). */
const BOOKINGS: TapContext["booking"][] = [null, { holder: "someone-else" }];

/** The site's devices are lockers, but for each gateway's door. */
const typeOf = (device: string) => (doorIds.has(device) ? "BIKE_HOUSE_DOOR" : "LOCKER");
const doorIds = new Set(gatewayIds(3).map((g) => deviceId(doorAlias(g))));

/** Every (granted, action, reason) the rule gives for these grants, over the states and the time window. */
function possible(decision: AccessDecision, grants: Grant[], at: number[]): Set<string> {
  const out = new Set<string>();
  for (const now of at)
    for (const booking of BOOKINGS)
      for (const occupancy of occupancies(decision.card_id)) {
        const d = decideTap({
          card: decision.card_id,
          now: new Date(now),
          device: decision.device_id
            ? { device_id: decision.device_id, type: typeOf(decision.device_id), location_id: locationId }
            : null,
          rfidParking: true,
          grants,
          occupancy,
          booking,
        });
        out.add(`${d.granted} ${d.action} ${d.reason}`);
        // Granted, then the hardware did not do it: the gateway says so instead.
        if (d.granted) out.add(`${d.granted} ${d.action} actuation_failed`);
      }
  return out;
}

/**
 * An RFID decision at the edge equals what the cloud's rule (shared/domain/access-decision.ts) decides for
 * the keys the gateway held: the site's kept cards for a local decision, every card the cloud knows for
 * one it answered. Judged at the gateway's own estimate of the cloud's time at the tap (its wall clock
 * while it has not heard the cloud, as its decision says) and up to the moment it decided; the latch and who parked are the
 * gateway's to know, so every state of them is allowed. A card the gateway does not hold, decided
 * without the cloud's answer, is `offline_unknown`.
 */
export async function tapsFollowTheRule(
  db: Db,
  decided: Decided[],
  history: GrantHistory = new Map(),
): Promise<string[]> {
  const failures: string[] = [];
  const grantsOf = new Map<string, Grant[]>();
  for (const { gateway, decision: d, at: decidedAt } of decided) {
    const key = `${gateway}/${d.card_id}`;
    // A card an integrator edited: the gateway may have decided on any version the cloud held by then
    // (its key cache lags as long as its link does); the convergence of the caches is judged on its own.
    let versions: { grants: Grant[] }[] | undefined = history.get(key)?.filter((v) => v.from <= decidedAt);
    if (!versions) {
      const now = grantsOf.get(key) ?? (await cardGrantsAt(db, gateway, d.card_id));
      grantsOf.set(key, now);
      versions = [{ grants: now }];
    }
    // On the clock the gateway judged by: its wall clock while it had not heard the cloud's (the message
    // says so), though the outbox dates the fact by the cloud's time once it knows it.
    const wall = d.judged_on_wall_clock === true;
    const tappedAt = Date.parse(wall ? d.observed_at : (d.observed_cloud_at ?? d.observed_at));
    const at = [tappedAt, tappedAt + DECIDE_WINDOW_MS];
    const allowed = new Set<string>();
    for (const { grants: all } of versions) {
      const held = all.filter((g) => g.whitelist_id === KEPT_WHITELIST);
      for (const a of possible(d, d.decided_by === "cloud" ? all : held, at)) allowed.add(a);
      // The gateway's sweep deletes grants expired by its estimate of the cloud's time, never ahead of
      // it: what had expired when it decided may be gone, and a card it does not hold, without the
      // cloud's answer, is refused.
      const unswept = held.filter((g) => g.expires_at === null || Date.parse(g.expires_at) > decidedAt);
      if (d.decided_by === "local")
        for (const grants of [held, unswept])
          if (possible(d, grants, at).has("false none unknown_card"))
            allowed.add("false none offline_unknown");
    }
    const got = `${d.granted} ${d.action} ${d.reason}`;
    if (!allowed.has(got))
      failures.push(
        `${gateway} decided card ${d.card_id} (${d.decided_by}, seq ${d.seq}) as "${got}"; the rule allows ${[...allowed].join(" | ")}`,
      );
  }
  return failures;
}
