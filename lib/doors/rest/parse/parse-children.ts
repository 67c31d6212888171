/**
 * `GET /{parent}/:id/{child}?<list params>` -> a read of the child table, scoped to the
 * rows whose foreign key points at one parent row.
 * In: the parent table, the raw `:id` and the child segment. Out: a read command with the `parent` capability set.
 * Never: picks one of several foreign keys silently. When the child table has more than one FK to
 * the parent (shipments.sender_id and recipient_id -> users), the bare table name is a 400 whose
 * hint names the relations (`/users/1/shipments!sender`); the segment may be any reverse relation
 * name of lib/schema/relations.ts.
 */
import type { ExportFormat, ReadCommand } from '../../../command/command';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import { GatewayError } from '../../../errors/gateway-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import { relationsNamed } from '../../../schema/relations';
import type { SchemaCache, Table } from '../../../schema/schema-types';
import type { CursorCodec } from '../../../pipeline/cursor-codec';
import { parseKey } from './parse-key';
import { parseList } from './parse-list';
import { clip, resolveTable } from '../../shared/resolve-names';

export function parseChildren(schema: SchemaCache, parent: Table, request: GatewayRequest, config: ResolvedConfig, cursors: CursorCodec, accept: ExportFormat = 'json'): ReadCommand {
  const childName = request.segments[2] ?? '';
  const key = parseKey(parent, request.rawSegments[1] ?? '', config.tenantColumn);
  const candidates = relationsNamed(parent, childName).filter((c) => c.relation.direction === 'reverse');
  if (candidates.length === 0) {
    const child = resolveTable(schema, childName); // 404 for an unknown table
    throw new GatewayError('NOT_FOUND', `No foreign key of \`${child.name}\` references \`${parent.name}\`, so it has no child route under it.`);
  }
  if (candidates.length > 1) {
    const names = candidates.map((c) => c.relation.name).sort();
    throw new GatewayError('PARSE_ERROR', `\`${clip(childName)}\` has ${candidates.length} foreign keys to \`${parent.name}\`; name the one to follow.`, {
      details: { parent: parent.name, child: clip(childName), candidates: names },
      hint: `Use one of: ${names.map((n) => `/${parent.name}/:id/${n}`).join(', ')}.`,
    });
  }
  const { foreignKey } = candidates[0]!.relation;
  return parseList(foreignKey.table, request.query, config, cursors, Object.freeze({ table: parent, childName, key, foreignKey }), accept);
}
