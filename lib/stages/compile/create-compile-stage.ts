/**
 * compile: Command -> Plan.
 * In: a command whose names are schema-cache objects. Out: `{ text, values }`, how to run it, and
 * the shape of its result (which column holds what), the only thing rendering reads about it.
 * Never: reads caller text (there is none left), or puts a value anywhere but a `$n` parameter.
 */
import type { AggregateList, Command, GetCommand, ReadCommand } from '../../command/command';
import { assertNever } from '../../command/command';
import type { ResolvedConfig } from '../../pipeline/resolved-config';
import { GatewayError } from '../../errors/gateway-error';
import { compileSql, type Sql } from '../../sql/sql';
import type { Plan, ResultShape } from '../../pipeline/plan';
import type { CommandContext, Stages } from '../../pipeline/stage-types';
import { compileAggregate } from './compile-aggregate';
import { compileDelete } from './compile-delete';
import { compileGet } from './compile-get';
import { compileInsert } from './compile-insert';
import { compileExport } from './compile-export';
import { compileList, compileParentVisible } from './compile-list';
import { compilePlan } from './compile-plan';
import { compileCountEstimate, compileRead } from './compile-read';
import { compileRpc, compileRpcCountEstimate, compileRpcRead, maxAffectedChecked } from './compile-rpc';
import { compileWriteAnswer } from './compile-answered-write';
import { compileUpdate } from './compile-update';
import { shapeOf } from './shape-of';
import { sizeCheckedStatement } from './size-checked';

export function createCompileStage(): Stages['compile'] {
  return function compile(ctx: CommandContext): Plan {
    const { command, config } = ctx;
    // The contracts are the schema cache itself: nothing to ask the database.
    if (command.kind === 'contracts') return Object.freeze({ query: null, readOnly: true, shape: shapeOf(command) });
    const shape = shapeOf(command);
    const plan: Plan = { query: compileSql(sizeBound(statementOf(command, config), command, shape, config.maxResponseBytes)), readOnly: isRead(command), shape, ...answerPlan(command) };
    const estimate = estimateOf(command, config.maxLimit);
    if (estimate) return Object.freeze({ ...plan, estimate });
    if (command.kind === 'read' && command.export && command.parent && !command.plan) return Object.freeze({ ...plan, parentCheck: compileSql(compileParentVisible(command.parent)) });
    if (command.kind === 'rpc' && command.resultFormat === 'binary' && command.fn.returns !== 'void') return Object.freeze({ ...plan, binaryResults: true });
    // `missing=default` inserts other values than the probe's prefix INSERT would: no probe (no `details.row`).
    if (command.kind === 'insert' && command.batch && command.rowCount > 1 && command.missingDefault !== true && command.answer?.plan === undefined) {
      const rows = command.rowCount;
      return Object.freeze({ ...plan, rowProbe: Object.freeze({ rows, query: (prefix: number) => compileSql(compileInsert(command, prefix)) }) });
    }
    return Object.freeze(plan);
  };
}

function statementOf(command: Exclude<Command, { kind: 'contracts' }>, config: ResolvedConfig): Sql {
  switch (command.kind) {
    case 'insert':
    case 'update':
    case 'delete': {
      const { answer } = command;
      if (!answer) return command.kind === 'insert' ? compileInsert(command, undefined, config.maxResponseBytes) : command.kind === 'update' ? compileUpdate(command, config.maxResponseBytes) : compileDelete(command, config.maxResponseBytes);
      // With the plan capability: EXPLAIN of the statement that would build the body `for=` names.
      if (answer.plan) return compilePlan(answer.plan, compileWriteAnswer({ ...command, answer: { ...answer, media: answer.plan.for ?? 'json' } }, config.maxResponseBytes));
      return compileWriteAnswer({ ...command, answer }, config.maxResponseBytes);
    }
    case 'rpc': {
      const call = maxAffectedChecked(command, command.answer?.read ? compileRpcRead(command, command.answer.read, config.maxLimit) : compileRpc(command));
      return command.answer?.plan ? compilePlan(command.answer.plan, call) : call;
    }
    case 'read':
      return readStatement(command, config);
    default:
      return assertNever(command, 'command');
  }
}

/**
 * The one path of every read: its capabilities pick the statement (docs/architecture.md, "One
 * Command vocabulary"). A page (`page` media): one row by key, one aggregate, a stream, or the
 * page with its keyset cursor, each answered with its plan when `plan` is set; any other media:
 * the tree of levels (compile-read.ts), with the `plan` media its plan.
 */
function readStatement(command: ReadCommand, config: ResolvedConfig): Sql {
  if (command.media === 'page') {
    if (command.key) return compileGet(command as GetCommand);
    if (command.aggregate) return compileAggregate(command as AggregateList, config.searchConfig);
    if (command.plan) return compilePlan(command.plan, compileList(command, config.searchConfig));
    return command.export ? compileExport(command, command.export, config.searchConfig) : compileList(command, config.searchConfig);
  }
  // The page capabilities are compiled with a page only: a tree read asking for one is refused.
  const capability = pageCapability(command);
  if (capability !== undefined) throw new GatewayError('PARSE_ERROR', `\`${capability}\` is available on a page read only.`);
  if (command.media === 'plan' && command.plan) return compilePlan(command.plan, compileRead({ ...command, media: command.plan.for ?? 'json' }, undefined, config.maxLimit));
  return compileRead(command, undefined, config.maxLimit);
}

/** The first capability of a page (command.ts) a read sets, if any. */
function pageCapability(command: ReadCommand): string | undefined {
  if (command.key) return 'key';
  if (command.aggregate) return 'aggregate';
  if (command.export) return 'export';
  if (command.cursor) return 'cursor';
  if (command.search) return 'search';
  if (command.distinct) return 'distinct';
  if (command.parent) return 'parent';
  if (command.tieBreakers) return 'tieBreakers';
  return undefined;
}

/**
 * A count by estimate (`planned`, `estimated`) of a read or of a call's rows: the EXPLAIN execute
 * runs first. `cap`: max_limit, up to which `estimated` is the exact count.
 */
function estimateOf(command: Exclude<Command, { kind: 'contracts' }>, cap: number): Plan['estimate'] {
  if (command.kind === 'read') {
    if (command.media === 'plan' || (command.count !== 'planned' && command.count !== 'estimated')) return undefined;
    return { query: compileSql(compileCountEstimate(command)), mode: command.count, cap };
  }
  const read = command.kind === 'rpc' && command.answer?.plan === undefined ? command.answer?.read : undefined;
  if (command.kind !== 'rpc' || !read || read.media === 'plan' || (read.count !== 'planned' && read.count !== 'estimated')) return undefined;
  return { query: compileSql(compileRpcCountEstimate(command, read)), mode: read.count, cap };
}

/**
 * A read's statement with its body column size-checked (size-checked.ts, docs/configuration.md
 * `max_response_bytes`): a page, a row, a function's result, a `read`. Writes check their
 * own representation (a data-modifying statement cannot be wrapped). Not wrapped: an export
 * (streamed, rows of any number), a plan (EXPLAIN) or an aggregate (one small value), and a function's
 * binary result (several rows of any type; the driver guard of lib/db/check-out.ts stands there).
 */
function sizeBound(statement: Sql, command: Exclude<Command, { kind: 'contracts' }>, shape: ResultShape, maxBytes: number): Sql {
  if (command.kind === 'insert' || command.kind === 'update' || command.kind === 'delete') return statement;
  switch (shape.kind) {
    case 'list':
      return sizeCheckedStatement(statement, 1 + Math.max(shape.data, shape.count, shape.lastKey, shape.total ?? 0, shape.parentVisible ?? 0), shape.data, maxBytes);
    case 'row':
      return sizeCheckedStatement(statement, 1, shape.data, maxBytes);
    case 'call':
      return sizeCheckedStatement(statement, 1, shape.value, maxBytes);
    case 'read':
      return sizeCheckedStatement(statement, 1 + Math.max(shape.body, shape.count, shape.total), shape.body, maxBytes);
    default:
      return statement;
  }
}

/** The exposed schema a read or an answered write runs in (search_path), and a dry run (rolled back). */
function answerPlan(command: Exclude<Command, { kind: 'contracts' }>): Pick<Plan, 'schema' | 'rollback'> {
  switch (command.kind) {
    case 'read':
      // A page runs as every default-grammar request does, on the connection's search_path.
      return command.media === 'page' ? {} : { schema: command.schema };
    case 'insert':
    case 'update':
    case 'delete':
    case 'rpc':
      if (!command.answer) return {};
      return { schema: command.answer.schema, ...(command.answer.rollback ? { rollback: true } : {}) };
    default:
      return {};
  }
}

/** Reads run in READ ONLY transactions: a function called by a view cannot write either. */
export function isRead(command: Command): boolean {
  switch (command.kind) {
    case 'contracts':
    case 'read':
      return true;
    // IMMUTABLE and STABLE functions cannot write (PostgreSQL refuses), so they get the read-only
    // transaction; a VOLATILE one may write, as the caller, under RLS.
    case 'rpc':
      return command.answer?.readOnly === true || command.fn.volatility !== 'v';
    case 'insert':
    case 'update':
    case 'delete':
      return false;
    default:
      return assertNever(command, 'command');
  }
}
