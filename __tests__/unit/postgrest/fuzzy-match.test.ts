/**
 * PostgREST's "Perhaps you meant" scoring (fuzzyset), checked on the examples of PostgREST's own
 * noRelBetweenHint documentation: a near name is suggested, an exact one is itself alone, a name
 * with nothing close has no suggestion.
 */
import { fuzzyMatches } from '../../../lib/doors/postgrest/parse/fuzzy-match';

describe('fuzzyMatches', () => {
  const children = ['directors', 'roles', 'actors'];
  it('suggests the closest name for a misspelt one', () => {
    expect(fuzzyMatches(children, 'role')[0]?.[1]).toBe('roles');
    expect(fuzzyMatches(['films'], 'film')[0]?.[1]).toBe('films');
  });
  it('answers an exact name (any case) alone with score 1', () => {
    expect(fuzzyMatches(children, 'Actors')).toEqual([[1, 'actors']]);
  });
  it('suggests nothing when nothing is close', () => {
    expect(fuzzyMatches(children, 'noclosealternative')).toEqual([]);
    expect(fuzzyMatches(['films'], 'noclosealternative')).toEqual([]);
  });
});
