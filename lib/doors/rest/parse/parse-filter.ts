/**
 * One query parameter -> one Condition (the command's one condition vocabulary). Two equivalent
 * spellings (docs/querying.md, "Filters"): key-style `col.op=value` and value-style
 * `col=op.value`; no operator means `eq`.
 */
import type { Condition, FilterOp } from '../../../command/command';
import { filterOps } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import type { Column, Table } from '../../../schema/schema-types';
import { clip } from '../../shared/resolve-names';
import { splitList } from '../../shared/split-list';

const opSet: ReadonlySet<string> = new Set(filterOps);

/** Key-style: the key is `<column>.<op>`; returns undefined when the key is not of that form. */
export function splitKeyStyle(table: Table, key: string): { column: Column; op: string } | undefined {
  const dot = key.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const column = table.columnsByName.get(key.slice(0, dot));
  return column ? { column, op: key.slice(dot + 1) } : undefined;
}

export function parseKeyStyle(column: Column, op: string, raw: string): Condition {
  if (!opSet.has(op)) throw unknownOperator(column, op);
  return build(column, op as FilterOp, raw, 'key');
}

export function parseValueStyle(column: Column, raw: string): Condition {
  if (raw === 'is_null') return build(column, 'is_null', 'true', 'value');
  const dot = raw.indexOf('.');
  if (dot > 0) {
    const op = raw.slice(0, dot);
    if (opSet.has(op)) return build(column, op as FilterOp, raw.slice(dot + 1), 'value');
  }
  return build(column, 'eq', raw, 'value');
}

function build(column: Column, op: FilterOp, raw: string, style: 'key' | 'value'): Condition {
  const field = { column, path: [] };
  if (column.compareType === null && needsTypeName(column, op)) {
    throw new GatewayError('PARSE_ERROR', `Column \`${column.name}\` is ${column.type}, a type the gateway's database role may not name, so \`${op}\` cannot compare values with it.`, {
      hint: "Grant the gateway's role USAGE on the schema of the column's type.",
    });
  }
  switch (op) {
    case 'in': {
      let list = raw;
      if (list.startsWith('(') && list.endsWith(')')) list = list.slice(1, -1);
      else if (style === 'value') {
        throw new GatewayError('PARSE_ERROR', `The \`in\` filter on \`${column.name}\` needs a parenthesised list: \`${column.name}=in.(a,b)\`.`, {
          hint: `To match the literal text, write \`${column.name}=eq.${clip(raw)}\`.`,
        });
      }
      return { kind: 'in', field, values: list === '' ? [] : splitList(list, column.name), negate: false };
    }
    case 'is_null': {
      if (raw !== 'true' && raw !== 'false') throw new GatewayError('PARSE_ERROR', `The \`is_null\` filter on \`${column.name}\` takes true or false.`);
      return { kind: 'is', field, value: raw === 'true' ? 'null' : 'not_null', negate: false };
    }
    case 'like':
    case 'ilike':
      return { kind: 'compare', field, op, value: likePattern(raw), negate: false };
    case 'contains':
      // A true array: int2vector, oidvector and the like have category 'A' but no `@>`.
      if (column.compareElementType === null) {
        throw new GatewayError('PARSE_ERROR', `The \`contains\` filter needs an array column; \`${column.name}\` is ${column.type}.`);
      }
      return { kind: 'contains', field, value: raw, negate: false };
    case 'eq':
    case 'ne':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      // `json` (unlike jsonb) has no comparison operators at all.
      if (column.type === 'json') throw new GatewayError('PARSE_ERROR', `Column \`${column.name}\` is json, which cannot be compared; store it as jsonb to filter on it.`);
      return { kind: 'compare', field, op: op === 'ne' ? 'neq' : op, value: raw, negate: false };
  }
}

/**
 * Comparisons PostgreSQL cannot type from the column alone: a composite value would be read as an
 * anonymous record, and an `in` list of arrays would need an array-of-arrays type. They need the
 * cast to the column's type (docs/querying.md#column-types).
 */
function needsTypeName(column: Column, op: FilterOp): boolean {
  if (op === 'in' && column.compareElementType !== null) return true;
  return column.category === 'C' && op !== 'like' && op !== 'ilike' && op !== 'is_null';
}

/** `*` is the only wildcard (docs/querying.md, "`like` and `ilike`"); `%`, `_` and `\` in the value are literal. */
export function likePattern(raw: string): string {
  return raw.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
}

function unknownOperator(column: Column, op: string): GatewayError {
  return new GatewayError('PARSE_ERROR', `Unknown filter operator \`${clip(op)}\` on \`${column.name}\`.`, {
    hint: `Operators: ${filterOps.join(', ')}.`,
  });
}
