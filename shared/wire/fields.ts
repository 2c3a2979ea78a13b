/** Fields several wire messages share (shared/wire/messages.ts, keys.ts). */
import * as z from "zod/mini";
import "./zod-english.ts";

export const Timestamp = z.iso.datetime({ offset: true });

/**
 * The cloud's clock when it published a down message (docs/decisions/clock.md): the gateway learns the
 * cloud's time from it and never judges a cloud deadline by its own wall clock. Optional: older clouds
 * send none.
 */
export const SentAt = { sent_at: z.optional(Timestamp) };

/** A card id on the wire (spec: Whitelist entity id): lowercase hex, even length, at most 20 characters. */
export const WireCardId = z
  .string()
  .check(z.regex(/^(?:[0-9a-f]{2}){1,10}$/, "lowercase hex, even length, ≤ 20"));
