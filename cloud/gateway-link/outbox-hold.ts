import type { Clock } from "../../shared/time/clock.ts";
import { isStoreFull } from "../store/store-full.ts";

/** How long a gateway's later messages wait, at most, for the one the store refused. */
export const HOLD_MAX_MS = 120_000;

/**
 * Keeps a gateway's outbox in order across a store that refused one of its messages (its disk full): until
 * that message is applied (the gateway sends its oldest unconfirmed rows again first), its later ones are
 * dropped unacknowledged, and come again after it. Applied out of order, a later reading overtook an
 * earlier one that found the latch open, and a session was billed to the later one (found by the
 * simulation, seed 500389). In this process only, and for HOLD_MAX_MS at most: a message that never comes
 * again holds nothing up for long.
 */
export function createOutboxHold(clock: Clock) {
  const held = new Map<string, { outbox: string; seq: number; since: number }>();

  return {
    /** Whether this message waits for an earlier one of its outbox the store refused. */
    waits(gatewayId: string, outbox: string, seq: number): boolean {
      const h = held.get(gatewayId);
      if (!h || h.outbox !== outbox || seq <= h.seq) return false;
      if (clock.now().getTime() - h.since <= HOLD_MAX_MS) return true;
      held.delete(gatewayId);
      return false;
    },
    /** The message could not be applied: when the store was full, its later ones wait for it. */
    failed(gatewayId: string, outbox: string, seq: number, err: unknown): void {
      if (!isStoreFull(err)) return;
      const h = held.get(gatewayId);
      if (h && h.outbox === outbox && h.seq <= seq) return;
      held.set(gatewayId, { outbox, seq, since: clock.now().getTime() });
    },
    /** The message was applied (or known applied): the ones after it go on. */
    applied(gatewayId: string, outbox: string, seq: number): void {
      const h = held.get(gatewayId);
      if (h && h.outbox === outbox && h.seq === seq) held.delete(gatewayId);
    },
  };
}
