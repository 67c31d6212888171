/**
 * `expand=<rel>[,nested:<rel>...]` -> Expansions (docs/relations.md, naming in lib/schema/relations.ts).
 * In: the table, the parameter text and the columns the row will carry. Out: resolved relations,
 * each with the target columns to embed. Never: lets a name through that is not a discovered
 * foreign key, or guesses between two relations that answer to the same name.
 */
import type { Column, Relation, Table } from '../../../schema/schema-types';
import type { Embed, FieldItem } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import { type NameVisibility, suggestName } from '../../../errors/name-hint';
import { relationsNamed, relationsOf } from '../../../schema/relations';
import { requestLimits } from '../../shared/request-limits';
import { clip } from '../../shared/resolve-names';
import { splitList } from '../../shared/split-list';

const NESTED = 'nested:';
/** Each expansion is a correlated subquery per row; a bound keeps one request's statement sane. */
export const MAX_EXPANSIONS = requestLimits.expansions;
/** PostgreSQL's identifier limit (NAMEDATALEN - 1); an alias longer than this is truncated. */
const MAX_IDENTIFIER_BYTES = 63;

export function parseExpand(table: Table, text: string | undefined, selected: readonly Column[]): readonly Embed[] {
  if (text === undefined) return Object.freeze([]);
  const expansions: Embed[] = [];
  for (const entry of splitList(text, 'expand')) {
    const nested = entry.startsWith(NESTED);
    const name = nested ? entry.slice(NESTED.length) : entry;
    if (name === '') throw new GatewayError('PARSE_ERROR', 'The `expand` parameter has an empty relation name.', { hint: 'Write expand=rel1,nested:rel2.' });
    if (expansions.some((e) => e.key === name)) continue;
    const relation = resolveRelation(table, name, nested);
    if (Buffer.byteLength(name, 'utf8') > MAX_IDENTIFIER_BYTES) {
      // The name becomes a column alias, which PostgreSQL would silently truncate (NAMEDATALEN).
      throw new GatewayError('PARSE_ERROR', `The relation name \`${clip(name)}\` is longer than ${MAX_IDENTIFIER_BYTES} bytes, so it cannot be a key of the row.`, {
        hint: 'Expand the relation by its constraint name.',
      });
    }
    const column = table.columnsByName.get(name);
    if (column && selected.includes(column)) {
      // The expanded value is a key of the row; a column of the same name would make two.
      throw new GatewayError('PARSE_ERROR', `The relation \`${clip(name)}\` has the name of a selected column of \`${table.name}\`.`, {
        hint: `Leave \`${clip(name)}\` out of select, or expand the relation by another of its names.`,
      });
    }
    expansions.push(embedOf(relation));
  }
  if (expansions.length > MAX_EXPANSIONS) {
    throw new GatewayError('PARSE_ERROR', `At most ${MAX_EXPANSIONS} relations can be expanded in one request.`, {
      details: { limit: 'expansions', max: MAX_EXPANSIONS, given: expansions.length },
    });
  }
  return Object.freeze(expansions);
}

/**
 * An expansion as an embed: the whole target table (each column a field keyed by its name, made
 * by `*`, so a policy may narrow it), by the relation's foreign key, keyed by the relation's name.
 */
function embedOf(relation: Relation): Embed {
  const items = relation.target.columns.map((column): FieldItem => Object.freeze({ kind: 'field', key: column.name, field: Object.freeze({ column, path: [] }), cast: null, aggregate: null, resultCast: null, fromStar: true }));
  const node = Object.freeze({ table: relation.target, items: Object.freeze(items), explicitSelect: false, where: [], order: [], limit: null, offset: 0 });
  return Object.freeze({ key: relation.name, spelled: relation.name, link: Object.freeze({ kind: 'fk' as const, relation }), cardinality: relation.cardinality, inner: false, spread: false, node });
}

function resolveRelation(table: Table, name: string, nested: boolean): Relation {
  const candidates = relationsNamed(table, name);
  if (candidates.length === 0) {
    // A relation is named only when the caller may read the table it leads to.
    const relations = function* () {
      for (const r of relationsOf(table)) for (const n of r.names) yield { name: n, visible: (v: NameVisibility) => v.readable(r.relation.target) };
    };
    throw new GatewayError('UNKNOWN_RELATION', `Table \`${table.name}\` has no relation \`${clip(name)}\` to expand.`, {
      details: { table: table.name, relation: clip(name) },
      ...suggestName(name, relations, (near) => `Did you mean \`${near}\`?`),
    });
  }
  const usable = nested
    ? candidates.filter((c) => c.relation.direction === 'reverse')
    : candidates.filter((c) => c.relation.direction === 'forward' || c.relation.cardinality === 'one');
  if (usable.length === 0) {
    throw nested
      ? new GatewayError('PARSE_ERROR', `\`${clip(name)}\` is a forward (many-to-one) relation of \`${table.name}\`; \`nested:\` is for one-to-many relations.`, {
          hint: `Write expand=${clip(name)}.`,
        })
      : new GatewayError('PARSE_ERROR', `\`${clip(name)}\` is a one-to-many relation of \`${table.name}\`; expand it with \`nested:\`.`, {
          hint: `Write expand=nested:${clip(name)}.`,
        });
  }
  if (usable.length > 1) {
    const names = usable.map((c) => c.relation.name).sort();
    throw new GatewayError('PARSE_ERROR', `The relation name \`${clip(name)}\` is ambiguous on \`${table.name}\`: ${usable.length} foreign keys answer to it.`, {
      details: { table: table.name, relation: clip(name), candidates: names },
      hint: `Name one of: ${names.map((n) => `${nested ? NESTED : ''}${n}`).join(', ')}.`,
    });
  }
  const found = usable[0]!.relation;
  // The key in each row is the name the caller wrote; nested: always renders an array.
  return Object.freeze({ ...found, name, cardinality: nested ? 'many' : found.cardinality });
}
