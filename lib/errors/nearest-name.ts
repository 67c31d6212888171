/**
 * "Did you mean" suggestions for unknown keys, columns and tables: the candidate with the
 * smallest edit distance, if it is close enough to be a plausible typo.
 */
export function nearestName(input: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const needle = input.toLowerCase();
  for (const candidate of candidates) {
    const d = editDistance(needle, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  // Allow roughly one typo per three characters, at least 2.
  const limit = Math.max(2, Math.floor(input.length / 3));
  return best !== undefined && bestDistance <= limit ? best : undefined;
}

/** Levenshtein distance, O(a*b) with one row; inputs are names (short), capped at 256 chars. */
export function editDistance(a: string, b: string): number {
  if (a.length > 256 || b.length > 256) return Math.abs(a.length - b.length) + 256;
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}
