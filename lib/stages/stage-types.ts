/**
 * The six stages and the context they share. Each stage reads the context and returns one
 * immutable value; `runPipeline` stores it on the context for the next stage. A stage given in
 * `options.stages` replaces the default one and receives it as its second argument, so it can
 * wrap it (`(ctx, next) => narrow(next(ctx))`).
 */
import type { Command } from '../command/command';
import type { RowProbe } from '../db/locate-failing-row';
import type { ResolvedConfig } from '../config/resolved-config';
import type { GatewayRequest } from '../http/gateway-request';
import type { SchemaCache } from '../schema/schema-types';
import type { CompiledQuery } from '../sql/sql';
import type { Identity } from './auth/identity';
import type { Database } from './execute/database';

/** What `compile` hands to `execute`: the SQL plus how to run it. */
export interface Plan {
  /** Null when the answer needs no database (GET /_rpc/contracts). */
  readonly query: CompiledQuery | null;
  /** Run in a READ ONLY transaction. */
  readonly readOnly: boolean;
  /** Batch inserts: the same INSERT over a prefix of the rows, to name the row that failed. */
  readonly rowProbe?: RowProbe;
  /** Ask PostgreSQL for binary result columns (`x-gw-result-format: binary`). */
  readonly binaryResults?: boolean;
}

/** Raw text columns of the rows of the plan's statement (PostgreSQL builds the JSON; nothing is parsed). */
export interface Result {
  readonly rows: readonly (readonly (string | null)[])[];
  /** With `plan.binaryResults`: the result columns and the raw bytes of each row's fields. */
  readonly binary?: {
    readonly fields: readonly { readonly name: string; readonly typeOid: number }[];
    readonly rows: readonly (readonly (Buffer | null)[])[];
  };
}

export interface BaseContext {
  readonly request: GatewayRequest;
  readonly config: ResolvedConfig;
  readonly schema: SchemaCache;
  readonly db: Database;
}
export interface ParseContext extends BaseContext {
  readonly identity: Identity;
}
export interface CommandContext extends ParseContext {
  readonly command: Command;
}
export interface ExecuteContext extends CommandContext {
  readonly plan: Plan;
}
/** Everything known about a request so far; `res.locals.gateway` holds this for host middleware. */
export interface GatewayContext extends BaseContext {
  identity?: Identity;
  command?: Command;
  plan?: Plan;
  result?: Result;
}

type MaybePromise<T> = T | Promise<T>;

export interface Stages {
  auth: (ctx: BaseContext) => MaybePromise<Identity>;
  parse: (ctx: ParseContext) => MaybePromise<Command>;
  policy: (ctx: CommandContext) => MaybePromise<Command>;
  allowList: (ctx: CommandContext) => MaybePromise<Command>;
  compile: (ctx: CommandContext) => MaybePromise<Plan>;
  execute: (ctx: ExecuteContext) => MaybePromise<Result>;
}

export type StageName = keyof Stages;

export const stageNames: readonly StageName[] = ['auth', 'parse', 'policy', 'allowList', 'compile', 'execute'];

/** A replacement stage: receives the default stage so it can wrap it. */
export type StageOverrides = {
  [K in StageName]?: (ctx: Parameters<Stages[K]>[0], defaultStage: Stages[K]) => ReturnType<Stages[K]>;
};
