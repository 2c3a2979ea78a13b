/**
 * Device aliases in the order a technician reads them: runs of digits compare as numbers ("2" before "10",
 * "A2" before "A10"), other text by letter ignoring case. Our own rather than `localeCompare` with
 * `numeric`: that loads ICU's collation data, ~2 MB of the daemon's resident memory for one sort
 * (README: gateway footprint).
 */
export function compareAliases(a: string, b: string): number {
  const runs = (s: string) => s.match(/\d+|\D+/g) ?? [];
  const x = runs(a);
  const y = runs(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const p = x[i] as string;
    const q = y[i] as string;
    if (p === q) continue;
    if (/^\d/.test(p) && /^\d/.test(q)) {
      // As numbers, without a limit on their size: fewer significant digits first, then digit by digit.
      const m = p.replace(/^0+(?=\d)/, "");
      const n = q.replace(/^0+(?=\d)/, "");
      if (m.length !== n.length) return m.length - n.length;
      if (m !== n) return m < n ? -1 : 1;
      continue;
    }
    const l = p.toLowerCase();
    const r = q.toLowerCase();
    if (l !== r) return l < r ? -1 : 1;
  }
  if (x.length !== y.length) return x.length - y.length;
  // Equal but for case or leading zeros: any fixed order will do.
  return a < b ? -1 : a > b ? 1 : 0;
}
