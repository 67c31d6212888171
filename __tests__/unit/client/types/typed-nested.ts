/**
 * Compile-time checks of the client's types for issue 29's writes (docs/client.md), never run:
 * client-types-nested.test.ts runs `tsc --strict --noEmit` on this file. `sort` takes a column of
 * a to-one related row (`'customer.name'`); `insert` with one object takes related rows under
 * relation names as the `Nested` key of the Database type describes them; `updateMany` and
 * `client.batch`. Every `@ts-expect-error` line must be an error.
 */
import { createClient, type NestedInsertOf, type SortName } from '../../../../lib/client';

type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_proof?: T): void {}

/** In the shape `tablegate gen types` emits, with its `Nested` key. */
interface Database {
  tables: {
    customers: {
      Row: { id: number; name: string };
      Insert: { id?: number; name: string };
      Update: { id?: number; name?: string };
      Relationships: { orders: { table: 'orders'; cardinality: 'many' } };
      Nested: { orders: { side: 'child'; fills: 'customer_id' } };
    };
    orders: {
      Row: { id: number; customer_id: number; total: number };
      Insert: { id?: number; customer_id: number; total: number };
      Update: { id?: number; customer_id?: number; total?: number };
      Relationships: { customer: { table: 'customers'; cardinality: 'one' }; order_lines: { table: 'order_lines'; cardinality: 'many' } };
      Nested: { customer: { side: 'parent'; fills: 'customer_id' }; order_lines: { side: 'child'; fills: 'order_id' } };
    };
    order_lines: {
      Row: { order_id: number; line_no: number; product: string };
      Insert: { order_id: number; line_no: number; product: string };
      Update: { order_id?: number; line_no?: number; product?: string };
      Relationships: { order: { table: 'orders'; cardinality: 'one' } };
      Nested: { order: { side: 'parent'; fills: 'order_id' } };
    };
  };
}

export async function typedNested(): Promise<void> {
  const client = createClient<Database>('http://localhost:3000/api', { token: () => 'jwt' });

  // ---- sort by a column of a to-one related row ----
  client.from('orders').sort('customer.name', 'desc').sort('total');
  assertType<Equal<SortName<Database, 'orders'>, 'id' | 'customer_id' | 'total' | 'customer.id' | 'customer.name'>>();
  // @ts-expect-error not a column of the related table
  client.from('orders').sort('customer.nme');
  // @ts-expect-error a to-many relation cannot order the rows
  client.from('customers').sort('orders.total');

  // ---- nested insert: an order with its lines, the lines without order_id ----
  const created = await client.from('orders').insert({ customer_id: 1, total: 10, order_lines: [{ line_no: 1, product: 'a' }, { line_no: 2, product: 'b' }] });
  if (!created.error) assertType<Equal<typeof created.data.id, number>>();
  // A to-one parent inserted first: customer_id is then optional.
  client.from('orders').insert({ total: 10, customer: { name: 'New' } });
  // @ts-expect-error customer_id beside the relation that fills it
  client.from('orders').insert({ customer_id: 1, total: 10, customer: { name: 'New' } });
  // @ts-expect-error a line needs its product
  client.from('orders').insert({ customer_id: 1, total: 10, order_lines: [{ line_no: 1 }] });
  // @ts-expect-error the line's order_id comes from the order
  const withKey: NestedInsertOf<Database, 'orders'> = { customer_id: 1, total: 1, order_lines: [{ order_id: 5, line_no: 1, product: 'a' }] };
  void withKey;
  // @ts-expect-error not a relation of orders
  client.from('orders').insert({ customer_id: 1, total: 10, lines: [] });
  // @ts-expect-error the plain insert still needs customer_id (no relation fills it)
  client.from('orders').insert({ total: 10 });

  // ---- updateMany and batch ----
  const many = await client.from('orders').updateMany([{ id: 1, total: 2 }, { id: 2, customer_id: 3 }], { returning: ['id', 'total'], missing: 'ignore' });
  if (!many.error) {
    assertType<Equal<typeof many.data, { id: number; total: number }[]>>();
    assertType<Equal<typeof many.missing, number[] | undefined>>();
  }
  // @ts-expect-error not a column
  client.from('orders').updateMany([{ id: 1, totl: 2 }]);
  const batch = await client.batch([
    { method: 'POST', path: '/orders', body: { customer_id: 1, total: 3 } },
    { method: 'POST', path: '/order_lines', body: { order_id: { $ref: '0.id' }, line_no: 1, product: 'x' } },
  ]);
  if (!batch.error) assertType<Equal<typeof batch.data, { readonly status: number; readonly body: unknown }[]>>();
}
