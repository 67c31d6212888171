/**
 * The PostgREST dialect's reads through the real client, @supabase/postgrest-js, over HTTP
 * (docs/postgrest-dialect.md). Fixture: __tests__/fixtures/080-postgrest.sql.
 */
import { type PostgrestApp, usePostgrestApp } from '../support/postgrest-app';

let app: PostgrestApp;
usePostgrestApp({}, (a) => (app = a));

describe('postgrest dialect: select', () => {
  it('returns the rows of the caller\'s tenant as a JSON array, columns as selected', async () => {
    const { data, error, status } = await app.client().from('authors').select('id,name').order('id');
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual([
      { id: 1, name: 'Ada' },
      { id: 2, name: 'Brontë' },
      { id: 3, name: 'Curie' },
    ]);
  });
});
