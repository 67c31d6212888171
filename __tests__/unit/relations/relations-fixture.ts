/**
 * A hand-made schema with foreign keys for the relation unit tests (no database): the shapes of
 * the integration fixtures (many-to-one, one-to-many, one-to-one, two FKs to one table) plus a
 * hostile-named table and a column whose name equals a relation name.
 */
import type { ForeignKey, Table } from '../../../lib/schema/schema-types';
import { makeSchema, makeTable } from '../support/schema-fixture';

type Mutable = { foreignKeys: ForeignKey[]; referencedBy: ForeignKey[]; uniqueKeys: Table['uniqueKeys'] };

export const users = makeTable('users', [['id', 'integer'], ['email', 'text'], ['name', 'text']], ['id']);
export const orders = makeTable('orders', [['id', 'bigint'], ['user_id', 'integer'], ['status', 'text'], ['total', 'numeric(12,2)'], ['placed_at', 'timestamp with time zone']], ['id']);
export const orderItems = makeTable('order_items', [['id', 'integer'], ['order_id', 'bigint'], ['price', 'numeric(12,2)']], ['id']);
export const profiles = makeTable('user_profiles', [['user_id', 'integer'], ['avatar_url', 'text']], ['user_id']);
export const shipments = makeTable('shipments', [['id', 'integer'], ['sender_id', 'integer'], ['recipient_id', 'integer']], ['id']);
export const weird = makeTable('we"ird table', [['id', 'integer'], ['a"b_id', 'integer'], ['select', 'text']], ['id']);
/** `posts.author` is a text column and `author_id` an FK: the relation `author` collides with it. */
export const posts = makeTable('posts', [['id', 'integer'], ['author_id', 'integer'], ['author', 'text']], ['id']);

function link(name: string, from: Table, column: string, to: Table): ForeignKey {
  const fk: ForeignKey = { name, table: from, columns: [from.columnsByName.get(column)!], referencedTable: to, referencedColumns: to.primaryKey };
  (from as unknown as Mutable).foreignKeys.push(fk);
  (to as unknown as Mutable).referencedBy.push(fk);
  return fk;
}

export const ordersUser = link('orders_user_id_fkey', orders, 'user_id', users);
export const itemsOrder = link('order_items_order_id_fkey', orderItems, 'order_id', orders);
export const profilesUser = link('user_profiles_user_id_fkey', profiles, 'user_id', users);
export const shipmentsSender = link('shipments_sender_id_fkey', shipments, 'sender_id', users);
export const shipmentsRecipient = link('shipments_recipient_id_fkey', shipments, 'recipient_id', users);
export const weirdUser = link('we"ird_fk', weird, 'a"b_id', users);
export const postsAuthor = link('posts_author_id_fkey', posts, 'author_id', users);

export const schema = makeSchema([users, orders, orderItems, profiles, shipments, weird, posts]);
