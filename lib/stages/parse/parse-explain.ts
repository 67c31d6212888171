import type { ExplainCommand } from '../../command/command';
import type { ResolvedConfig } from '../../config/resolved-config';
import type { Table } from '../../schema/schema-types';
import type { CursorCodec } from './cursor-codec';
import { notYet } from './not-yet';

/** `GET /{table}/_explain?<list params>` -> ExplainCommand. */
export function parseExplain(_table: Table, _query: readonly (readonly [string, string])[], _config: ResolvedConfig, _cursors: CursorCodec): ExplainCommand {
  return notYet('GET /{table}/_explain');
}
