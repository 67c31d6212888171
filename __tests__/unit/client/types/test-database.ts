/**
 * A hand-written Database type for the `client_test` fixture schema (__tests__/fixtures/
 * 096-client.sql), in the shape `tablegate gen types` emits (docs/client.md, "The Database type").
 * Used by the type tests (typed-calls.ts, run through tsc by client-types.test.ts) and by the
 * integration test of the client.
 */
export type Json = string | number | boolean | null | { [key: string]: Json | undefined } | Json[];

export interface Database {
  tables: {
    customers: {
      Row: { id: number; tenant_id: string; name: string };
      Insert: { id: number; tenant_id?: string; name: string };
      Update: { id?: number; tenant_id?: string; name?: string };
      Relationships: { orders: { table: 'orders'; cardinality: 'many' } };
    };
    orders: {
      Row: {
        id: number;
        tenant_id: string;
        customer_id: number | null;
        status: Database['enums']['order_status'];
        total: number;
        note: string | null;
        tags: string[];
        meta: Json;
      };
      Insert: {
        id?: number;
        tenant_id?: string;
        customer_id?: number | null;
        status?: Database['enums']['order_status'];
        total?: number;
        note?: string | null;
        tags?: string[];
        meta?: Json;
      };
      Update: {
        id?: number;
        tenant_id?: string;
        customer_id?: number | null;
        status?: Database['enums']['order_status'];
        total?: number;
        note?: string | null;
        tags?: string[];
        meta?: Json;
      };
      Relationships: {
        customer: { table: 'customers'; cardinality: 'one' };
        order_lines: { table: 'order_lines'; cardinality: 'many' };
      };
    };
    order_lines: {
      Row: { order_id: number; line_no: number; tenant_id: string; product: string; qty: number };
      Insert: { order_id: number; line_no: number; tenant_id?: string; product: string; qty: number };
      Update: { order_id?: number; line_no?: number; tenant_id?: string; product?: string; qty?: number };
      Relationships: { order: { table: 'orders'; cardinality: 'one' } };
    };
    // A view PostgreSQL cannot write (GROUP BY).
    order_counts: {
      Row: { status: Database['enums']['order_status']; n: number };
      Insert: never;
      Update: never;
      Relationships: {};
    };
  };
  enums: { order_status: 'open' | 'paid' };
  functions: {
    place_order: {
      Args: { customer_id: number; note?: string | null };
      Returns: Database['tables']['orders']['Row'];
    };
    order_total: { Args: { order_id: number }; Returns: number | null };
    open_count: { Args: never; Returns: number };
  };
}
