/**
 * The six stages and the context they share. Each stage reads the context and returns one
 * immutable value; `runPipeline` stores it on the context for the next stage. A stage given in
 * `options.stages` replaces the default one and receives it as its second argument, so it can
 * wrap it (`(ctx, next) => narrow(next(ctx))`).
 */
import type { Command } from '../command/command';
import type { ResolvedConfig } from './resolved-config';
import type { GatewayRequest } from './gateway-request';
import type { SchemaCache } from '../schema/schema-types';
import type { Identity } from './identity';
import type { Database } from './database';
import type { Plan } from './plan';
import type { Result } from './result';
import type { RequestMeasures } from './request-measures';
import type { StageName } from './stage-names';

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
  /** Time in auth and the database, for metrics and Server-Timing; runPipeline fills in auth. */
  measures?: RequestMeasures;
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

/** Every stage has a name in stage-names.ts and every name a stage (a compile-time check both ways). */
type SameNames<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const stagesAreNamed: SameNames<keyof Stages, StageName> = true;
void stagesAreNamed;

/** A replacement stage: receives the default stage so it can wrap it. */
export type StageOverrides = {
  [K in StageName]?: (ctx: Parameters<Stages[K]>[0], defaultStage: Stages[K]) => ReturnType<Stages[K]>;
};
