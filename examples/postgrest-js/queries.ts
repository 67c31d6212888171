/**
 * Application code written against PostgREST with @supabase/postgrest-js: nothing in it knows
 * about tablegate. Point `url` at PostgREST or at examples/postgrest-js/server.ts; the answers
 * are the same. The schema is __tests__/fixtures/080-postgrest.sql's `pgrst` (authors, books,
 * shelves through book_shelves).
 */
import { PostgrestClient } from '@supabase/postgrest-js';

export function connect(url: string, jwt: string): PostgrestClient {
  return new PostgrestClient(url, { headers: { Authorization: `Bearer ${jwt}` } });
}

/** The books of a genre with their author and shelves, newest first, one page. */
export async function booksOfGenre(db: PostgrestClient, genre: string, page = 0, size = 10) {
  const { data, error, count } = await db
    .from('books')
    .select('id, title, pages, author:authors!author_id(name), shelves(label)', { count: 'exact' })
    .eq('genre', genre)
    .order('id', { ascending: false })
    .range(page * size, page * size + size - 1);
  if (error) throw new Error(`${error.code}: ${error.message}`);
  return { books: data, total: count };
}

/** How many books and pages each genre has (aggregates). */
export async function genreStats(db: PostgrestClient) {
  const { data, error } = await db.from('books').select('genre, books:count(), pages:pages.sum()').order('genre');
  if (error) throw new Error(`${error.code}: ${error.message}`);
  return data;
}

/** One author by id, or null (maybeSingle). */
export async function author(db: PostgrestClient, id: number) {
  const { data, error } = await db.from('authors').select('id, name, author_bios(bio)').eq('id', id).maybeSingle();
  if (error) throw new Error(`${error.code}: ${error.message}`);
  return data;
}

/** Full-text search over titles. */
export async function searchTitles(db: PostgrestClient, words: string) {
  const { data, error } = await db.from('books').select('id, title').textSearch('fts', words, { type: 'websearch' }).order('id');
  if (error) throw new Error(`${error.code}: ${error.message}`);
  return data;
}
