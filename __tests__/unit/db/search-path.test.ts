import { searchPathOf } from '../../../lib/db/search-path';

describe('searchPathOf', () => {
  it('lists the exposed schemas in order, then the extra ones, each once', () => {
    expect(searchPathOf(['public'], ['public'])).toBe('"public"');
    expect(searchPathOf(['api', 'public'], ['extensions', 'api'])).toBe('"api", "public", "extensions"');
    expect(searchPathOf(['api'], [])).toBe('"api"');
  });

  it('quotes every name, so capitals, spaces, commas and quotes stay one schema each', () => {
    expect(searchPathOf(['Api'], ['Mixed Case', 'a-b', 'we"ird', 'a, b', '$user'])).toBe('"Api", "Mixed Case", "a-b", "we""ird", "a, b", "$user"');
  });

  it('refuses a NUL character (never reaches PostgreSQL)', () => {
    expect(() => searchPathOf(['a\u0000b'], [])).toThrow(TypeError);
  });
});
