/**
 * RFID card ids as the spec stores them (spec: Whitelist entity id): raw lowercase hexadecimal, no
 * separators, even length, at most 20 characters. Readers print ids in many styles; this is the one
 * normal form. Returns null for anything that cannot be a card id.
 */
export function normaliseCardId(raw: string): string | null {
  const hex = raw.trim().replace(/[\s:.-]/g, "").toLowerCase();
  if (!/^[0-9a-f]+$/.test(hex)) return null;
  const even = hex.length % 2 === 1 ? `0${hex}` : hex;
  return even.length > 0 && even.length <= 20 ? even : null;
}
