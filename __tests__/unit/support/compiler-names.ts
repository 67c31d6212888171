/**
 * The names the compile stage writes into SQL by itself, derived from the compiler so that a new
 * alias cannot escape the collision tests (docs/architecture.md, "Names the compiler writes"):
 *
 * - `sqlTemplateWords()`: every word of every sql`...` literal in lib/stages/compile, read with the
 *   TypeScript parser: the aliases (`_p`, `_r`, `_t`, ...), the output column names (`r`, `v`,
 *   `n`), the keywords and the function names, in every branch whether a test reaches it or not.
 * - `representativeStatements()`: the statements of every route and every shape (list with
 *   and without expand, cursor, distinct, search, child routes, get, aggregate, explain, insert,
 *   batch, upsert, the row probe, update, delete, every kind of function call, text and binary),
 *   compiled by the real parse and compile stages from a hand-made schema whose every name starts
 *   with `Q`. Any other quoted name in them (`"k0"`, positional argument keys `"1"`) was made by
 *   the compiler, and so was every unquoted word.
 *
 * __tests__/fixtures/070-collide.sql names columns after all of these (checked by
 * __tests__/unit/compile/compiler-names.test.ts and __tests__/integration/name-collisions.test.ts).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { operationOf, type Command, type Condition, type ReadCommand, type OperationName } from '../../../lib/command/command';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import type { DbFunction, ForeignKey, FunctionArg, SchemaCache, Table, UniqueKey } from '../../../lib/schema/schema-types';
import { createCompileStage } from '../../../lib/stages/compile/create-compile-stage';
import { combineUpdates } from '../../../lib/command/combine-updates';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { createParseStage } from '../../../lib/doors/rest/parse/create-parse-stage';
import { createPostgrestParseStage } from '../../../lib/doors/postgrest/parse/create-postgrest-parse-stage';
import type { CommandContext, ParseContext } from '../../../lib/pipeline/stage-types';
import { testConfig } from '../auth/config-fixture';
import { makeTable } from './schema-fixture';

const COMPILE_DIR = path.resolve(__dirname, '../../../lib/stages/compile');

/** Lower-cased words of the static text of every sql`...` template in lib/stages/compile. */
export function sqlTemplateWords(): Set<string> {
  const words = new Set<string>();
  for (const file of fs.readdirSync(COMPILE_DIR).filter((f) => f.endsWith('.ts'))) {
    const source = ts.createSourceFile(file, fs.readFileSync(path.join(COMPILE_DIR, file), 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isTaggedTemplateExpression(node) && node.tag.getText(source) === 'sql') {
        const t = node.template;
        const texts = ts.isNoSubstitutionTemplateLiteral(t) ? [t.text] : [t.head.text, ...t.templateSpans.map((s) => s.literal.text)];
        for (const text of texts) for (const token of tokenize(text)) if (token.kind === 'word') words.add(token.name);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return words;
}

export interface Token {
  readonly kind: 'word' | 'quoted' | 'string' | 'param' | 'number' | 'punct';
  /** Words lower-cased (PostgreSQL folds unquoted names), quoted identifiers unescaped, else the text. */
  readonly name: string;
}

/** SQL text -> tokens: enough of PostgreSQL's lexer for the statements the compiler writes. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const m of text.matchAll(/\s+|"((?:[^"]|"")*)"|'(?:[^']|'')*'|\$\d+|[A-Za-z_][A-Za-z0-9_$]*|\d+(?:\.\d+)?|::|\S/g)) {
    const s = m[0];
    if (/^\s/.test(s)) continue;
    if (s.startsWith('"')) tokens.push({ kind: 'quoted', name: m[1]!.replace(/""/g, '"') });
    else if (s.startsWith("'")) tokens.push({ kind: 'string', name: s });
    else if (s.startsWith('$')) tokens.push({ kind: 'param', name: s });
    else if (/^[A-Za-z_]/.test(s)) tokens.push({ kind: 'word', name: s.toLowerCase() });
    else if (/^\d/.test(s)) tokens.push({ kind: 'number', name: s });
    else tokens.push({ kind: 'punct', name: s });
  }
  return tokens;
}

/** A name the schema supplied: every name of the representative schema starts with `Q`. */
export function isSchemaName(token: Token): boolean {
  return token.kind === 'quoted' && token.name.startsWith('Q');
}

/** The names a statement's text holds that the compiler made: unquoted words and quoted non-schema names. */
export function compilerNamesIn(text: string): Set<string> {
  return new Set(tokenize(text).filter((t) => t.kind === 'word' || (t.kind === 'quoted' && !isSchemaName(t))).map((t) => t.name));
}

/** System columns (xmax, ...): PostgreSQL refuses a column of that name, so the compiler's use of one cannot collide. */
export const systemColumnNames: ReadonlySet<string> = new Set(['tableoid', 'xmin', 'cmin', 'xmax', 'cmax', 'ctid']);

/** Every name the compiler writes: the template words plus the names in the representative statements. */
export function compilerNames(): string[] {
  const names = sqlTemplateWords();
  for (const s of representativeStatements()) for (const n of compilerNamesIn(s.text)) names.add(n);
  return [...names].sort();
}

// ---- The representative schema: every name starts with Q, every type is a quoted Q name too.

const parent = makeTable(
  'Qparent',
  [
    // A key with a default (serial): missing=default then draws for the rows that give it.
    ['Qid', 'integer', { hasDefault: true }],
    ['Qname', 'text'],
    ['Qamount', 'numeric(12,2)'],
    ['Qtags', 'text[]'],
    ['Qcode', 'text', { nullable: false }],
  ],
  ['Qid'],
  'Qs',
);
const child = makeTable('Qchild', [['Qid', 'integer'], ['Qparent_id', 'integer'], ['Qlabel', 'text']], ['Qid'], 'Qs');
const note = makeTable('Qnote', [['Qid', 'integer'], ['Qparent_code', 'text'], ['Qbody', 'text']], ['Qid'], 'Qs');
// Qgeo: a type whose operators live outside pg_catalog (written OPERATOR("Qs".=)).
// Qwide: more keys than one json_build_object takes (50 pairs): a read of them splices chunks.
const wide = makeTable('Qwide', [['Qid', 'integer'], ...Array.from({ length: 110 }, (_, i): [string, string] => [`Qc${i}`, 'text'])], ['Qid'], 'Qs');
const keyless = makeTable('Qlog', [['Qat', 'timestamp with time zone'], ['Qmessage', 'text'], ['Qgeo', '"Qs"."Qgeometry"', { operatorSchemas: { '=': 'Qs', '<': 'Qs', '>': 'Qs' } }]], [], 'Qs');

type Mutable = { foreignKeys: ForeignKey[]; referencedBy: ForeignKey[]; uniqueKeys: UniqueKey[] };
(parent as unknown as Mutable).uniqueKeys.push({ name: 'Qparent_code_key', columns: [parent.columnsByName.get('Qcode')!], primary: false });

function link(name: string, from: Table, column: string, to: Table, referenced: string): void {
  const fk: ForeignKey = { name, table: from, columns: [from.columnsByName.get(column)!], referencedTable: to, referencedColumns: [to.columnsByName.get(referenced)!] };
  (from as unknown as Mutable).foreignKeys.push(fk);
  (to as unknown as Mutable).referencedBy.push(fk);
}
link('Qfamily', child, 'Qparent_id', parent, 'Qid');
// An FK to a unique column that is not the key: the child route joins through the parent row.
link('Qcoded', note, 'Qparent_code', parent, 'Qcode');

const arg = (name: string, category: string, extra: Partial<FunctionArg> = {}): FunctionArg => ({
  name,
  type: `"Qs"."Qtype_${category}"`,
  typeOid: 0,
  category,
  mode: 'i',
  hasDefault: false,
  variadic: false,
  ...extra,
});

function fn(name: string, args: FunctionArg[], extra: Partial<DbFunction>): DbFunction {
  return {
    schema: 'Qs',
    name,
    oid: 0,
    identityArgs: '',
    args,
    defaults: args.filter((a) => a.hasDefault).length,
    variadic: args.some((a) => a.variadic),
    returnType: '"Qs"."Qtype"',
    returnTypeOid: 25,
    returnsSet: false,
    returns: 'scalar',
    resultColumns: [],
    volatility: 's',
    executable: true,
    ...extra,
  };
}

const resultColumns = [
  { name: 'Qtext', type: 'text', typeOid: 25 },
  // A type the binary decoder does not know: sent as to_json(column).
  { name: 'Qodd', type: '"Qs"."Qodd"', typeOid: 0 },
];
const functions: DbFunction[] = [
  fn('Qvoid', [arg('Qx', 'S')], { returns: 'void', returnType: 'void', returnTypeOid: 2278, volatility: 'v' }),
  fn('Qscalar', [arg('Qx', 'S')], {}),
  fn('Qnoargs', [], { returnTypeOid: 0 }),
  fn('Qscalars', [arg('Qx', 'S')], { returnsSet: true }),
  fn('Qodd_scalars', [], { returnsSet: true, returnTypeOid: 0 }),
  fn('Qrow', [arg('Qx', 'S')], { returns: 'row', resultColumns }),
  fn('Qrows', [arg('Qx', 'S'), arg('Qy', 'N', { hasDefault: true })], { returns: 'row', returnsSet: true, resultColumns }),
  fn('Qvariadic', [arg('Qfirst', 'S'), arg('Qrest', 'N', { mode: 'v', variadic: true, type: '"Qs"."Qtype_N"[]' })], {}),
  // Returns a domain named like a media type: its value is sent as it is (the PostgREST dialect's raw bodies).
  fn('Qbytes', [arg('', 'U', { type: 'bytea' })], { returnType: '"Qs"."application/octet-stream"', returnTypeOid: 90001 }),
];
const mediaDomain = { oid: 90001, schema: 'Qs', name: 'application/octet-stream', typtype: 'd', category: 'U', elementOid: null, baseOid: 17, labels: [], attributes: [] };

export const representativeSchema: SchemaCache = {
  schemas: ['Qs'],
  tables: [parent, child, note, keyless, wide],
  tablesByName: new Map([parent, child, note, keyless, wide].map((t) => [t.name, t])),
  functions,
  loadedAt: new Date(0),
  types: new Map([[mediaDomain.oid, mediaDomain]]),
};

// ---- The representative statements.

export interface Statement {
  readonly label: string;
  readonly kind: OperationName;
  readonly text: string;
}

const cursors = createCursorCodec(randomBytes(32));
const parseStage = createParseStage(cursors);
const postgrestParseStage = createPostgrestParseStage();
const compileStage = createCompileStage();

interface Call {
  readonly method: string;
  readonly path: string;
  readonly query?: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly searchConfig?: string;
  /** Adds policy row filters (as the legacy policy's `filter` does) to the command. */
  readonly rowFilters?: boolean;
  /** Parsed by the PostgREST dialect (docs/postgrest-dialect.md). */
  readonly postgrest?: boolean;
  /** A bulk update: each of these calls parsed as its own PATCH, then combined into one (combine-updates.ts). */
  readonly bulk?: readonly Call[];
}

function request(call: Call): GatewayRequest {
  const segments = call.path.split('/');
  return Object.freeze({
    id: 'compiler-names',
    method: call.method,
    segments,
    rawSegments: segments.map(encodeURIComponent),
    query: [...new URLSearchParams(call.query ?? '')].map(([k, v]) => [k, v] as const),
    headers: { 'content-type': 'application/json', ...call.headers },
    body: call.body === undefined || call.body instanceof Uint8Array ? undefined : JSON.stringify(call.body),
    ...(call.body instanceof Uint8Array ? { bodyBytes: call.body } : {}),
    loopback: true,
  });
}

function parseCall(call: Call): Command {
  if (call.bulk) {
    const combined = combineUpdates(call.bulk.map(parseCall));
    if (!combined) throw new Error(`${call.path}: the bulk rows do not combine`);
    return combined;
  }
  // The explain route is open to the roles in explainRoles; this caller has one of them.
  const config = testConfig({ schemas: ['Qs'], searchConfig: call.searchConfig, explainRoles: ['operator'], maxExportRows: 1000000 });
  const identity = { tenantId: 't', userId: 'u', role: 'operator', agentId: '', scopes: [], claims: {}, source: 'jwt' };
  const ctx = { request: request(call), config, schema: representativeSchema, identity, db: {} } as unknown as ParseContext;
  const command = (call.postgrest ? postgrestParseStage(ctx) : parseStage(ctx)) as Command;
  return call.rowFilters ? withRowFilters(command) : command;
}

/** The command as a policy with a row filter on every table it reads leaves it. */
function withRowFilters(command: Command): Command {
  const filter = (table: Table): Condition[] => [{ kind: 'compare', field: { column: table.columns[1]!, path: [] }, op: 'eq', value: 'policy', negate: false }];
  // A page: its embeds and its parent too.
  const page = (l: ReadCommand): ReadCommand => ({
    ...l,
    root: { ...l.root, rowFilters: filter(l.table), items: l.root.items.map((i) => (i.kind === 'embed' ? { kind: 'embed', embed: { ...i.embed, node: { ...i.embed.node, rowFilters: filter(i.embed.node.table) } } } : i)) },
    parent: l.parent && { ...l.parent, rowFilters: filter(l.parent.table) },
  });
  switch (command.kind) {
    case 'update':
    case 'delete':
      return { ...command, rowFilters: filter(command.table) };
    case 'read':
      if (command.media === 'page') return page(command);
      return { ...command, root: { ...command.root, rowFilters: filter(command.table) } };
    default:
      throw new Error(`no row filters for ${command.kind}`);
  }
}

const cursorFor = (query: string, values: (string | null)[]): string => {
  const list = parseCall({ method: 'GET', path: 'Qparent', query }) as ReadCommand;
  return cursors.encode(parent, list.root.order, values);
};

/**
 * Every command kind with the calls that reach each of its statement shapes. The Record type makes
 * a new command kind fail to compile until it has representative calls here.
 */
function representativeCalls(): Record<Exclude<OperationName, 'contracts'>, readonly Call[]> {
  const get = (path: string, query = '', extra: Partial<Call> = {}): Call => ({ method: 'GET', path, query, ...extra });
  const pg = (path: string, query = '', headers: Record<string, string> = {}, extra: Partial<Call> = {}): Call => ({ method: 'GET', path, query, headers, postgrest: true, ...extra });
  const post = (path: string, body: unknown, query = '', headers: Record<string, string> = {}): Call => ({ method: 'POST', path, query, body, headers });
  const listShapes = (path: string): Call[] => [
    get(path),
    get(path, 'select=Qname&sort=-Qamount&limit=5'),
    get(path, 'count=exact&Qname=eq.a&Qname=ne.b&Qamount=gt.1&Qamount=gte.1&Qamount=lt.9&Qamount=lte.9&Qname=in.(a,b)&Qname=like.a*&Qname=ilike.*B&Qamount=is_null&Qcode.is_null=false&Qtags=contains.x&Qtags=in.("{a,b}","{c}")'),
    get(path, 'distinct=Qname&count=exact'),
    get(path, 'search=a b'),
    get(path, 'search=a&search_columns=Qname', { searchConfig: 'english' }),
    get(path, 'expand=nested:Qfamily,nested:Qnote&count=exact'),
    get(path, 'select=Qname&sort=-Qamount&expand=nested:Qchild', { rowFilters: true }),
  ];
  return {
    list: [
      ...listShapes('Qparent'),
      get('Qparent', `sort=-Qamount&cursor=${cursorFor('sort=-Qamount', ['1.50', '7'])}`),
      get('Qparent', `sort=Qamount&cursor=${cursorFor('sort=Qamount', [null, '7'])}`),
      get('Qparent', `sort=Qcode&cursor=${cursorFor('sort=Qcode', ['a', '7'])}`),
      get('Qparent', `distinct=Qname&sort=Qname&cursor=${cursors.encode(parent, [{ field: { column: parent.columnsByName.get('Qname')!, path: [] }, embed: null, descending: false, nulls: null }], ['a'])}`),
      get('Qparent', 'select=Qname&sort=-Qamount&count=exact', { rowFilters: true }),
      get('Qchild', 'expand=Qparent'),
      get('Qchild', 'select=Qlabel&sort=-Qlabel&expand=Qfamily'),
      get('Qlog'),
      get('Qlog', 'select=Qmessage&sort=Qat'),
      get('Qlog', 'Qgeo=eq.a&Qgeo=ne.b&Qgeo=gt.c&Qgeo=in.(a,b)'),
      get('Qparent/1/Qchild', 'count=exact&expand=Qparent', { rowFilters: true }),
      get('Qparent/1/Qchild', 'select=Qlabel&sort=-Qlabel'),
      get('Qparent/1/Qnote', 'count=exact&distinct=Qbody'),
      // Exports (compile-export.ts): NDJSON / JSON rows and CSV lines.
      get('Qparent', '', { headers: { accept: 'application/x-ndjson' } }),
      get('Qparent', 'limit=5000&select=Qname&sort=-Qamount&expand=nested:Qchild', { rowFilters: true }),
      get('Qparent', 'select=Qname&sort=-Qamount&expand=nested:Qchild,nested:Qnote', { headers: { accept: 'text/csv' }, rowFilters: true }),
      get('Qparent', 'distinct=Qname', { headers: { accept: 'text/csv' } }),
      get('Qparent/1/Qchild', 'select=Qlabel&sort=-Qlabel&expand=Qparent', { headers: { accept: 'text/csv' }, rowFilters: true }),
    ],
    get: [get('Qparent/1'), get('Qparent/1', 'select=Qname&expand=nested:Qchild,nested:Qnote', { rowFilters: true }), get('Qchild/3', 'expand=Qparent')],
    aggregate: [
      get('Qparent/aggregate', 'fn=count'),
      ...['sum', 'avg', 'min', 'max'].map((f) => get('Qparent/aggregate', `fn=${f}&column=Qamount&Qname=eq.a&search=x`, { rowFilters: true })),
    ],
    explain: [get('Qparent/_explain', 'select=Qname&sort=-Qamount&expand=nested:Qchild&count=exact'), get('Qparent/_explain', 'search=a', { searchConfig: 'english' })],
    insert: [
      post('Qparent', { Qid: 1, Qname: 'a' }),
      post('Qparent', {}),
      post('Qparent', [{ Qid: 1, Qname: 'a' }, { Qid: 2 }], 'returning=Qid,Qname'),
      post('Qparent', [{ Qid: 1, Qname: 'a' }], '', { 'x-upsert': 'true' }),
      post('Qparent', { Qid: 1 }, '', { 'x-upsert': 'true' }),
      post('Qparent', [{ Qcode: 'a', Qname: 'b' }, { Qcode: 'c' }], '', { prefer: 'resolution=ignore-duplicates', 'x-on-conflict': 'Qcode' }),
      // The PostgREST dialect (compile-answered-write.ts): missing=default, a representation with an embed, an upsert.
      { ...post('Qparent', [{ Qid: 1, Qname: 'a' }, { Qid: 2 }], 'select=Qname,Qchild(Qlabel)', { prefer: 'return=representation, missing=default' }), postgrest: true },
      { ...post('Qparent', { Qcode: 'a', Qname: 'b' }, 'on_conflict=Qcode', { prefer: 'resolution=merge-duplicates, return=headers-only' }), postgrest: true },
    ],
    read: [
      pg('Qparent'),
      pg('Qparent', 'select=n:Qname,Qamount::text,Qtags&Qname=eq.a&or=(Qid.gt.1,and(Qname.like.a*,Qid.not.in.(1,2)))&Qid=eq(any).{1,2}&Qtags=cs.{a}&Qname=fts(english).a&Qcode=is.null&order=Qname.desc.nullslast&limit=5&offset=10', {}, { rowFilters: true }),
      pg('Qparent', 'select=Qname,Qamount.sum(),count()&order=Qname', { prefer: 'count=exact' }),
      pg('Qparent', 'select=Qname,Qchild!inner(Qlabel,Qparent(Qname))&Qchild.Qlabel=like.x*&Qchild.order=Qlabel&Qchild.limit=2', { prefer: 'count=estimated', accept: 'text/csv' }),
      pg('Qchild', 'select=Qlabel,p:Qparent(Qname),...Qparent(Qcode)&order=p(Qname).asc&Qparent=not.is.null', { prefer: 'count=planned', accept: 'application/vnd.pgrst.object+json' }),
      pg('Qparent', 'select=Qname,...Qchild(Qlabel),Qchild(count())', { accept: 'application/vnd.pgrst.plan+json; options=analyze|verbose' }),
      pg('Qparent', 'Qname=like(all).{a*,b}&Qid=not.is.unknown&Qname=plfts.a&Qcode=phfts(english).b', { accept: 'application/vnd.pgrst.plan+text; options=settings|buffers|wal' }),
      pg('Qparent', 'select=Qname', { accept: 'application/vnd.pgrst.array+json;nulls=stripped' }),
      pg('Qchild', 'select=count(),Qparent(Qname),...Qparent(Qcode),e:Qparent()&order=Qlabel'),
      // A row of more than 100 keys: three json_build_object chunks spliced (first, middle, last).
      pg('Qwide', `select=${Array.from({ length: 110 }, (_, i) => `a${i}:Qc${i}`).join(',')}`),
    ],
    update: [
      { method: 'PATCH', path: 'Qparent/1', query: 'returning=Qname', body: { Qname: 'a', Qamount: 2 }, rowFilters: true },
      // A bulk update (compile-bulk-update.ts): one column every row sets, one only some rows set.
      {
        method: 'PATCH',
        path: 'Qparent',
        bulk: [
          { method: 'PATCH', path: 'Qparent/1', query: 'returning=Qname', body: { Qname: 'a', Qamount: 2 }, rowFilters: true },
          { method: 'PATCH', path: 'Qparent/2', query: 'returning=Qname', body: { Qname: 'b' }, rowFilters: true },
        ],
      },
      { method: 'PATCH', path: 'Qparent', query: 'Qid=eq.1&or=(Qname.eq.a,Qcode.is.null)&select=Qname', body: { Qname: 'a' }, headers: { prefer: 'return=representation, handling=strict, max-affected=1', accept: 'application/vnd.pgrst.object+json' }, rowFilters: true, postgrest: true },
    ],
    delete: [
      { method: 'DELETE', path: 'Qparent/1' },
      { method: 'DELETE', path: 'Qparent/1', query: 'returning=Qid,Qname', rowFilters: true },
      { method: 'DELETE', path: 'Qparent', query: 'Qname=eq.a', headers: { prefer: 'return=representation' }, rowFilters: true, postgrest: true },
    ],
    rpc: ['text', 'binary'].flatMap((format): Call[] => {
      const call = (name: string, body?: unknown): Call => ({ method: 'POST', path: `rpc/${name}`, body, headers: { 'x-gw-result-format': format } });
      return [
        call('Qvoid', { Qx: 'a' }),
        call('Qscalar', { Qx: 'a' }),
        call('Qscalar', ['a']),
        call('Qnoargs'),
        call('Qscalars', { Qx: 'a' }),
        call('Qodd_scalars'),
        call('Qrow', ['a']),
        call('Qrows', { Qx: 'a' }),
        call('Qrows', ['a', 2]),
        call('Qvariadic', ['a', 1, 2]),
        call('Qvariadic', { Qfirst: 'a', Qrest: [1, 2] }),
      ];
    }).concat([
      // The PostgREST dialect: a read over a set-returning function's rows, and a call without arguments.
      { method: 'POST', path: 'rpc/Qrows', query: 'select=Qtext&Qtext=eq.a&order=Qtext', body: { Qx: 'a' }, headers: { prefer: 'count=exact' }, postgrest: true },
      { method: 'GET', path: 'rpc/Qodd_scalars', postgrest: true },
      // Read parameters on one scalar and on one row; a value sent as it is.
      { method: 'GET', path: 'rpc/Qscalar', query: 'Qx=a&pgrst_scalar=eq.a&limit=1', postgrest: true },
      { method: 'POST', path: 'rpc/Qrow', query: 'select=Qtext&Qtext=eq.a', body: { Qx: 'a' }, headers: { accept: 'application/vnd.pgrst.object+json' }, postgrest: true },
      { method: 'POST', path: 'rpc/Qbytes', body: Uint8Array.from([0xff, 0]), headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' }, postgrest: true },
    ]),
  };
}

/** Each representative call's statement, and for batch inserts the row probe's statement too. */
export function representativeStatements(): Statement[] {
  const statements: Statement[] = [];
  for (const [kind, calls] of Object.entries(representativeCalls()) as [OperationName, readonly Call[]][]) {
    for (const call of calls) {
      const command = parseCall(call);
      if (operationOf(command) !== kind) throw new Error(`${call.method} ${call.path} parsed as ${operationOf(command)}, listed under ${kind}`);
      const plan = compileStage({ command, config: testConfig({ searchConfig: call.searchConfig }) } as unknown as CommandContext);
      const label = `${call.method} /${call.path}${call.query ? `?${call.query}` : ''}${call.headers?.['x-gw-result-format'] === 'binary' ? ' (binary)' : ''}`;
      if (plan instanceof Promise || plan.query === null) throw new Error(`${label}: no statement`);
      statements.push({ label, kind, text: plan.query.text });
      if (plan.rowProbe) statements.push({ label: `${label} (row probe)`, kind, text: plan.rowProbe.query(1).text });
    }
  }
  return statements;
}
