/**
 * Compile-time checks of the client's types (docs/client.md), never run: client-types.test.ts
 * runs `tsc --strict --noEmit` on this file. Every `@ts-expect-error` line must be an error, and
 * an unused one is itself an error, so the test fails if any of these calls stops being checked
 * (for example if the row types degrade to `any`). The `Equal` lines pin exact result types.
 */
import { createClient, isTablegateClientError, type ClientErrorCode, type TablegateClientError } from '../../../../lib/client';
import type { Database, Json } from './test-database';

type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_proof?: T): void {}

export async function typedCalls(): Promise<void> {
  const client = createClient<Database>('http://localhost:3000/api', { token: () => 'jwt' });

  // ---- select narrows the row type; filters take the column's value type ----
  const page = await client.from('orders').select(['id', 'total']).eq('status', 'paid');
  if (page.error) {
    assertType<Equal<typeof page.error, TablegateClientError>>();
    assertType<Equal<typeof page.error.code, ClientErrorCode>>();
    assertType<Equal<typeof page.data, null>>();
    return;
  }
  assertType<Equal<typeof page.data, { id: number; total: number }[]>>();
  assertType<Equal<typeof page.next_cursor, string | undefined>>();
  assertType<Equal<typeof page.count, number>>();
  const first = page.data[0];
  // @ts-expect-error `note` was not selected
  first?.note;

  // @ts-expect-error wrong column name in select
  client.from('orders').select(['id', 'totl']);
  // @ts-expect-error wrong column name in eq
  client.from('orders').eq('stauts', 'paid');
  // @ts-expect-error wrong enum value
  client.from('orders').eq('status', 'shipped');
  // @ts-expect-error wrong enum value in an `in` list
  client.from('orders').in('status', ['open', 'shipped']);
  // @ts-expect-error a number column compared with text
  client.from('orders').gt('total', 'ten');
  // @ts-expect-error wrong column in sort
  client.from('orders').sort('placed_at', 'desc');
  // @ts-expect-error contains needs an array column
  client.from('orders').contains('note', 'x');
  // @ts-expect-error unknown table
  client.from('ordres');

  // Filters on columns that are not selected are fine; the row stays narrowed.
  const ranged = await client.from('orders').select(['id']).gte('total', 5).lte('total', 50).isNull('note', false).contains('tags', 'vip').sort('total', 'desc').limit(10);
  if (!ranged.error) assertType<Equal<typeof ranged.data, { id: number }[]>>();

  // No select: the whole row.
  const all = await client.from('orders').like('note', '*gift*');
  if (!all.error) assertType<Equal<(typeof all.data)[number]['status'], 'open' | 'paid'>>();

  // ---- expand is typed by Relationships ----
  const expanded = await client.from('orders').select(['id']).expand(['customer', 'nested:order_lines']);
  if (!expanded.error) {
    const row = expanded.data[0]!;
    assertType<Equal<typeof row.customer, { id: number; tenant_id: string; name: string } | null>>();
    assertType<Equal<(typeof row.order_lines)[number]['qty'], number>>();
  }
  // @ts-expect-error a to-many relation must be expanded with nested:
  client.from('orders').expand(['order_lines']);
  // @ts-expect-error unknown relation
  client.from('orders').expand(['customers']);

  // ---- get ----
  const one = await client.from('orders').get(1, { select: ['id', 'status'], expand: ['customer'] });
  if (!one.error) assertType<Equal<typeof one.data, { id: number; status: 'open' | 'paid'; customer: { id: number; tenant_id: string; name: string } | null }>>();
  // @ts-expect-error wrong column in get's select
  client.from('orders').get(1, { select: ['nope'] });

  // ---- insert / upsert typed by Insert ----
  const inserted = await client.from('orders').insert({ customer_id: 1, status: 'open', note: null }, { returning: ['id'] });
  if (!inserted.error) assertType<Equal<typeof inserted.data, { id: number }>>();
  const batch = await client.from('orders').insert([{ status: 'paid' }, { total: 3 }]);
  if (!batch.error) assertType<Equal<(typeof batch.data)[number]['id'], number>>();
  // @ts-expect-error wrong column name in insert
  client.from('orders').insert({ stauts: 'open' });
  // @ts-expect-error wrong enum value in insert
  client.from('orders').insert({ status: 'shipped' });
  // @ts-expect-error required column missing (customers.name)
  client.from('customers').insert({ id: 9 });
  // @ts-expect-error a view that cannot be written has Insert: never
  client.from('order_counts').insert({ status: 'open', n: 1 });
  // @ts-expect-error ... nor a batch
  client.from('order_counts').insert([]);
  // @ts-expect-error wrong column in upsert's onConflict
  client.from('orders').upsert({ id: 1, status: 'paid' }, { onConflict: ['idd'] });

  // ---- update typed by Update, delete ----
  const updated = await client.from('orders').update(1, { status: 'paid' }, { returning: ['id', 'status'] });
  if (!updated.error) assertType<Equal<typeof updated.data, { id: number; status: 'open' | 'paid' }>>();
  // @ts-expect-error wrong column name in update
  client.from('orders').update(1, { totl: 3 });
  // @ts-expect-error wrong value type in update
  client.from('orders').update(1, { total: '3' });
  // @ts-expect-error a view that cannot be written has Update: never
  client.from('order_counts').update(1, { n: 2 });
  const deleted = await client.from('order_lines').delete([1, 2]);
  if (!deleted.error) assertType<Equal<typeof deleted.data, null>>();
  const deletedRow = await client.from('order_lines').delete([1, 2], { returning: ['product'] });
  if (!deletedRow.error) assertType<Equal<typeof deletedRow.data, { product: string }>>();

  // ---- rpc typed by functions ----
  const placed = await client.rpc('place_order', { customer_id: 1 });
  if (!placed.error) assertType<Equal<typeof placed.data, Database['tables']['orders']['Row']>>();
  const count = await client.rpc('open_count');
  if (!count.error) assertType<Equal<typeof count.data, number>>();
  // @ts-expect-error wrong rpc argument name
  client.rpc('place_order', { customer: 1 });
  // @ts-expect-error wrong rpc argument type
  client.rpc('place_order', { customer_id: '1' });
  // @ts-expect-error missing required rpc arguments
  client.rpc('order_total');
  // @ts-expect-error a function without arguments takes none
  client.rpc('open_count', {});
  // @ts-expect-error unknown function
  client.rpc('place_ordr', { customer_id: 1 });

  // ---- errors ----
  const failed = await client.from('orders').get(999);
  if (failed.error) {
    const code: ClientErrorCode = failed.error.code;
    // @ts-expect-error not a catalogue code
    const wrong: ClientErrorCode = 'NOT_A_CODE';
    void code;
    void wrong;
    void failed.error.details;
    const hint: string | undefined = failed.error.hint;
    void hint;
  }
  const caught: unknown = new Error('x');
  if (isTablegateClientError(caught)) assertType<Equal<typeof caught.status, number>>();

  // Json columns take JSON values.
  const meta: Json = { a: [1, 'b', null] };
  client.from('orders').update(1, { meta });

  // Node's and the browser's fetch fit the fetch option.
  createClient<Database>('http://localhost/api', { fetch: globalThis.fetch, headers: { 'x-request-id': 'r1' } });

  // Without a Database type, any table and column, values unknown.
  const loose = await createClient('http://localhost/api').from('anything').select(['a']).eq('b', 1);
  if (!loose.error) assertType<Equal<typeof loose.data, { a: unknown }[]>>();
}
