/**
 * Runs a request that stands for several (an Expansion from the door: a batch, a nested insert, a
 * bulk update; docs/writing.md) as its caller, all or nothing. In: the request's context with the
 * caller's identity, the expansion, the stages. Out: the one answer. Never: runs SQL before every
 * operation has passed parse, the rate limit, policy and allow-list; runs an operation through
 * anything but the stages a single request goes through; or commits part of the operations.
 *
 * 1. Before any SQL: each operation, with stand-ins for references to earlier answers, through
 *    the door's parse stage, the rate limit, policy and allow-list. A refusal names the operation.
 * 2. One transaction (Database.transaction): each operation, with its references resolved, through
 *    parse, policy, allow-list, compile and execute again (its values are real now), and the
 *    door's rendering. The first failure rolls everything back and is the answer, naming the operation.
 *
 * A bulk update (`oneStatement`): step 2 is ONE statement instead (combine-updates.ts,
 * compile-bulk-update.ts), its result row for each operation rendered as that operation's own
 * answer. When that statement fails, or two rows turn out to address the same key, it is rolled
 * back and step 2 runs as above, which answers exactly as before (naming the failing row, or
 * applying the duplicates in order).
 */
import { combineUpdates } from './command/combine-updates';
import { operationOf, type Command, type UpdateCommand } from './command/command';
import { toGatewayError } from './db/to-gateway-error';
import { GatewayError, isGatewayError } from './errors/gateway-error';
import { locatedError } from './errors/located-error';
import { responseTooLarge } from './errors/response-too-large';
import type { Database } from './pipeline/database';
import type { Expansion, OperationAnswer } from './pipeline/door';
import type { Identity } from './pipeline/identity';
import type { CommandContext, GatewayContext, Stages } from './pipeline/stage-types';
import type { Plan } from './pipeline/plan';
import type { Result } from './pipeline/result';

export interface ExpansionParts {
  readonly stages: Stages;
  readonly render: (command: Command, plan: Pick<Plan, 'shape'>, result: Result) => OperationAnswer;
  /** The rate limit (docs/scaling-out.md#rate-limits): each operation counts as the single request would. */
  readonly admit?: (ctx: CommandContext) => Promise<void>;
}

/** Kinds that only read: a batch of nothing else runs in a READ ONLY transaction. */
const readKinds = new Set<Command['kind']>(['read', 'contracts']);

export async function runExpansion(ctx: GatewayContext & { readonly identity: Identity }, expansion: Expansion, parts: ExpansionParts): Promise<OperationAnswer> {
  const { stages } = parts;
  const { identity, config, schema } = ctx;
  const where = (i: number) => expansion.operations[i]!.where;
  const label = (i: number) => describeWhere(where(i));

  const commands: Command[] = [];
  for (const [i, op] of expansion.operations.entries()) {
    try {
      const base = { request: op.checked, config, schema, db: ctx.db, identity };
      const parsed = { ...base, command: await stages.parse(base) };
      if (parts.admit) await parts.admit(parsed);
      const allowed = { ...base, command: await stages.policy(parsed) };
      commands.push(await stages.allowList(allowed));
    } catch (err) {
      throw located(err, where(i), label(i));
    }
  }
  const db = ctx.db;
  if (!db.transaction) throw new Error('the Database cannot run several statements in one transaction');
  const combined = expansion.oneStatement ? combineUpdates(commands) : undefined;
  if (combined) {
    const answer = await runCombined(ctx, expansion, parts, commands, combined).catch((err: unknown) => {
      if (err === runOneByOne) return undefined;
      // From COMMIT (a deferred constraint): the rows one by one answer it as before.
      if (!isGatewayError(err)) return undefined;
      throw err;
    });
    if (answer) return answer;
  }
  const readOnly = commands.every((c) => readKinds.has(c.kind));
  let at = 0;
  try {
    return await db.transaction(identity, { readOnly, statements: expansion.operations.length }, async (inTransaction: Database) => {
      const answers = new Answers(config.maxResponseBytes);
      for (const [i, op] of expansion.operations.entries()) {
        at = i;
        let ran = false;
        try {
          const base = { request: op.request(answers.list), config, schema, db: inTransaction, identity };
          const parsed = { ...base, command: await stages.parse(base) };
          const allowed = { ...parsed, command: await stages.policy(parsed) };
          const listed = { ...allowed, command: await stages.allowList(allowed) };
          const plan = await stages.compile(listed);
          const result = await stages.execute({ ...listed, plan });
          ran = true;
          answers.add(parts.render(listed.command, plan, result));
        } catch (err) {
          // A row its statement did not find (RLS hides it, or it does not exist), when the
          // request asked to skip those: the statement ran without error, the transaction goes on.
          if (ran && expansion.skipsNotFound && isGatewayError(err) && err.code === 'NOT_FOUND') {
            answers.skip();
            continue;
          }
          throw located(err, where(i), label(i));
        }
      }
      return expansion.answer(answers.list);
    });
  } catch (err) {
    if (isGatewayError(err)) throw err;
    // From BEGIN or COMMIT (a deferred constraint), outside any operation's execute stage.
    const failed = commands[at];
    const mapped = toGatewayError(err, { kind: failed ? operationOf(failed) : 'insert' });
    throw mapped ?? err;
  }
}

/** Thrown inside the combined statement's transaction to roll it back and run the operations one by one. */
const runOneByOne = Symbol('run the operations one by one');

/**
 * The operations' commands, combined into one bulk update, in one statement: each operation is
 * answered by the door's rendering of its own command over its row of the result (none: not
 * found, which fails the whole or is skipped). Throws runOneByOne (rolled back) when the one
 * statement fails or two rows share a key, for the operations to run one by one instead.
 */
async function runCombined(
  ctx: GatewayContext & { readonly identity: Identity },
  expansion: Expansion,
  parts: ExpansionParts,
  commands: readonly Command[],
  combined: UpdateCommand,
): Promise<OperationAnswer> {
  const { identity, config, schema } = ctx;
  return ctx.db.transaction!(identity, { readOnly: false, statements: 1 }, async (inTransaction: Database) => {
    const base = { request: expansion.operations[0]!.checked, config, schema, db: inTransaction, identity, command: combined };
    const plan = await parts.stages.compile(base);
    const shape = plan.shape;
    if (shape.kind !== 'written' || shape.row === undefined || shape.duplicateKeys === undefined) throw runOneByOne;
    let result: Result;
    try {
      result = await parts.stages.execute({ ...base, plan });
    } catch (err) {
      // A refusal of the data (a bad value, a check, RLS WITH CHECK): the rows one by one name the
      // row. A timeout or a lost database is not retried.
      if (isGatewayError(err) && err.status < 500) throw runOneByOne;
      throw err;
    }
    const byRow = new Map<number, readonly (string | null)[]>();
    for (const row of result.rows) {
      if (row[shape.duplicateKeys] === 'true') throw runOneByOne;
      byRow.set(Number(row[shape.row]), row);
    }
    const single = { shape: { kind: 'written', data: 0, count: 1 } } as const;
    const answers = new Answers(config.maxResponseBytes);
    for (const [i, command] of commands.entries()) {
      const row = byRow.get(i);
      try {
        answers.add(parts.render(command, single, { rows: row ? [[row[shape.data] ?? null, row[shape.count] ?? null]] : [] }));
      } catch (err) {
        if (expansion.skipsNotFound && isGatewayError(err) && err.code === 'NOT_FOUND') {
          answers.skip();
          continue;
        }
        const where = expansion.operations[i]!.where;
        throw located(err, where, describeWhere(where));
      }
    }
    return expansion.answer(answers.list);
  });
}

/**
 * The operations' answers in order, their bodies' bytes counted against max_response_bytes as
 * they come (the one response holds them all); `undefined` for an operation skipped as not found.
 */
class Answers {
  readonly list: (OperationAnswer | undefined)[] = [];
  private bytes = 0;
  constructor(private readonly maxBytes: number) {}

  add(answer: OperationAnswer): void {
    this.bytes += answer.body === null ? 0 : Buffer.byteLength(answer.body);
    if (this.bytes > this.maxBytes) throw responseTooLarge(this.maxBytes, this.bytes);
    this.list.push(answer);
  }

  skip(): void {
    this.list.push(undefined);
  }
}

function located(err: unknown, where: Readonly<Record<string, unknown>>, label: string): unknown {
  return isGatewayError(err) && !alreadyLocated(err, where) ? locatedError(err, where, label) : err;
}

function alreadyLocated(err: GatewayError, where: Readonly<Record<string, unknown>>): boolean {
  const details = err.details as Record<string, unknown> | undefined;
  return typeof details === 'object' && details !== null && Object.keys(where).every((k) => k in details && details[k] === where[k]);
}

function describeWhere(where: Readonly<Record<string, unknown>>): string {
  if ('operation' in where) return `Operation ${String(where.operation)} of the batch`;
  if ('row' in where) return `Row ${String(where.row)} of the bulk update`;
  if ('at' in where) return `The nested insert into ${String(where.at)}`;
  return 'An operation';
}
