/**
 * "Did you mean …?" for a misspelt name: the closest candidate within a few edits (insertions,
 * deletions, substitutions and swaps of neighbours), compared without regard to case, '-' or '_'.
 */
export function closest(word: string, candidates: Iterable<string>): string | null {
  const w = fold(word);
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = editDistance(w, fold(c));
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  // A third of the word may be wrong (at least one edit, at most three): "secrte_env" → "secret_env",
  // but "colour" is not offered "code".
  const allowed = Math.min(3, Math.max(1, Math.floor(w.length / 3)));
  return best !== null && bestDistance <= allowed ? best : null;
}

/** `(did you mean "x"?)`, or "" when nothing is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const c = closest(word, candidates);
  return c === null ? "" : ` (did you mean "${c}"?)`;
}

const fold = (s: string) => s.toLowerCase().replace(/[-_]/g, "");

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      let v = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = v;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}
