/**
 * The closest names to a misspelt one, scored as PostgREST's "Perhaps you meant" hints score them
 * (the fuzzyset algorithm: trigram then bigram cosine similarity over '-'-padded lower-case names,
 * the best 50 re-scored by Levenshtein distance). In: the candidate names and the name written.
 * Out: [score, name] pairs at or above minScore, best first; an exact match (ignoring case) alone
 * with score 1. Never: a name that is not among the candidates.
 */
export function fuzzyMatches(names: readonly string[], value: string, minScore = 0.33): [number, string][] {
  const byNormal = new Map<string, string>();
  for (const n of names) byNormal.set(n.toLowerCase(), n);
  const normal = value.toLowerCase();
  const exact = byNormal.get(normal);
  if (exact !== undefined) return [[1, exact]];
  for (const gramSize of [3, 2]) {
    const found = matchesOfSize([...byNormal.keys()], normal, gramSize, minScore).map(([s, n]): [number, string] => [s, byNormal.get(n)!]);
    if (found.length > 0) return found;
  }
  return [];
}

function matchesOfSize(normals: readonly string[], value: string, gramSize: number, minScore: number): [number, string][] {
  const query = grams(value, gramSize);
  const queryNorm = Math.sqrt([...query.values()].reduce((a, c) => a + c * c, 0));
  const cosine: [number, string][] = [];
  for (const n of normals) {
    const item = grams(n, gramSize);
    let dot = 0;
    for (const [g, c] of query) dot += c * (item.get(g) ?? 0);
    if (dot === 0) continue;
    const itemNorm = Math.sqrt([...item.values()].reduce((a, c) => a + c * c, 0));
    cosine.push([dot / (queryNorm * itemNorm), n]);
  }
  cosine.sort((a, b) => b[0] - a[0]);
  return cosine
    .slice(0, 50)
    .map(([, n]): [number, string] => [1 - levenshtein(n, value) / Math.max(n.length, value.length), n])
    .sort((a, b) => b[0] - a[0])
    .filter(([s]) => s >= minScore);
}

function grams(value: string, size: number): Map<string, number> {
  let padded = `-${value.toLowerCase().replace(/[^a-zA-Z0-9\u00C0-\u00FF, ]+/g, '')}-`;
  while (padded.length < size) padded += '-';
  const out = new Map<string, number>();
  for (let i = 0; i <= padded.length - size; i++) {
    const g = padded.slice(i, i + size);
    out.set(g, (out.get(g) ?? 0) + 1);
  }
  return out;
}

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}
