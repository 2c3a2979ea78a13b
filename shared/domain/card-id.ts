/**
 * RFID card ids as the spec stores them (spec: Whitelist entity id): raw lowercase hexadecimal, no
 * separators, even length, at most 20 characters. Readers print ids in many styles; this is the one
 * normal form. Returns null for anything that cannot be a card id.
 */
export function normaliseCardId(raw: string): string | null {
  const hex = raw
    .trim()
    .replace(/[\s:.-]/g, "")
    .toLowerCase();
  if (!/^[0-9a-f]+$/.test(hex)) return null;
  // An odd digit count is not a whole-byte uid (a lost character, or a reader that dropped a zero somewhere);
  // guessing where the zero belongs could yield another card's id, so reject it rather than pad it.
  return hex.length % 2 === 0 && hex.length <= 20 ? hex : null;
}

/**
 * A card id as logs may show it: only its last four hex digits (`****a1b2`), enough to tell taps apart
 * while helping a technician, never enough to clone or look up the card.
 */
export function maskCardId(card: string): string {
  const hex = card.replace(/[^0-9a-fA-F]/g, "").toLowerCase();
  return `****${hex.slice(-4)}`;
}
