/**
 * `tablegate install-change-feed`'s SQL (lib/cli/change-feed-sql.ts; docs/change-feed.md,
 * "Turning it on"): names reach it only as string literals, which the DO block turns into
 * identifiers with format('%I'); quotes in them are doubled. (The integration test runs it.)
 */
import { changeFeedScript } from '../../../lib/cli/change-feed-sql';

describe('changeFeedScript', () => {
  it('quotes every configured name as a literal, never as SQL text', () => {
    const sql = changeFeedScript({ schemas: ["o'hara", 'feed'], publication: "pub'; DROP TABLE x; --", tenantColumn: "ten'ant" });
    expect(sql).toContain("ARRAY['o''hara', 'feed']::text[]");
    expect(sql).toContain("pubname = 'pub''; DROP TABLE x; --'");
    expect(sql).toContain("format('ALTER PUBLICATION %I SET TABLE %s', 'pub''; DROP TABLE x; --', tables)");
    expect(sql).toContain("a.attname = 'ten''ant'");
    expect(sql).not.toMatch(/[^']'; DROP TABLE x; --[^']/);
  });

  it('without a tenant column sets no replica identity (it matches no column)', () => {
    expect(changeFeedScript({ schemas: ['public'], publication: 'p', tenantColumn: undefined })).toContain('a.attname = NULL::text');
  });
});
