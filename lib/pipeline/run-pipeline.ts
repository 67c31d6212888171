/**
 * Runs the six stages in order over one context. Each stage's value is stored on the context
 * (visible to host middleware as `res.locals.gateway`) before the next stage runs.
 * `admit`, when given, runs once the caller and the command are known (after `parse`) and before
 * `policy`: the rate limit (docs/scaling-out.md#rate-limits) refuses a request by throwing there.
 * In: the stages and a context with the request. Out: the result, and the context filled in.
 * With `ctx.measures`, the auth stage's time and its failure reason are recorded there.
 * Never: validates `options.stages` (resolveConfig did, once, at construction).
 */
import { authFailureReasonOf } from './auth-failure-reasons';
import type { Identity } from './identity';
import type { Result } from './result';
import { stageNames } from './stage-names';
import type { CommandContext, GatewayContext, StageOverrides, Stages } from './stage-types';

export async function runPipeline(stages: Stages, ctx: GatewayContext, admit?: (ctx: CommandContext) => Promise<void>): Promise<Result> {
  // A stage that answers synchronously (parse, policy, allow-list and compile do) is not awaited:
  // each await of a plain value costs a microtask turn per request.
  const identity = authenticate(stages, ctx);
  const withIdentity = Object.assign(ctx, { identity: isPromise(identity) ? await identity : identity });
  const command = stages.parse(withIdentity);
  const parsed = Object.assign(withIdentity, { command: isPromise(command) ? await command : command });
  if (admit) await admit(parsed);
  const allowed = stages.policy(parsed);
  parsed.command = isPromise(allowed) ? await allowed : allowed;
  const listed = stages.allowList(parsed);
  parsed.command = isPromise(listed) ? await listed : listed;
  const plan = stages.compile(parsed);
  const planned = Object.assign(parsed, { plan: isPromise(plan) ? await plan : plan });
  const result = await stages.execute(planned);
  ctx.result = result;
  return result;
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** The auth stage, timed into `ctx.measures` (a synchronous answer or failure too). */
export function authenticate(stages: Stages, ctx: GatewayContext): Identity | Promise<Identity> {
  const measures = ctx.measures;
  if (measures === undefined) return stages.auth(ctx);
  const started = performance.now();
  let answer: Identity | Promise<Identity>;
  try {
    answer = stages.auth(ctx);
  } catch (err) {
    measures.authFailure = authFailureReasonOf(err);
    measures.authMs += performance.now() - started;
    throw err;
  }
  if (!isPromise(answer)) {
    measures.authMs += performance.now() - started;
    return answer;
  }
  return answer.then(
    (identity) => {
      measures.authMs += performance.now() - started;
      return identity;
    },
    (err: unknown) => {
      measures.authFailure = authFailureReasonOf(err);
      measures.authMs += performance.now() - started;
      throw err;
    },
  );
}

/**
 * Applies `options.stages`, already checked by resolveConfig (lib/config/resolve-config.ts: known
 * names, functions only): each replacement gets the default stage as its second argument.
 */
export function applyStageOverrides(defaults: Stages, overrides: StageOverrides | undefined): Stages {
  const stages = { ...defaults };
  if (!overrides) return Object.freeze(stages);
  for (const name of stageNames) {
    const override = overrides[name];
    if (override === undefined) continue;
    const fallback = defaults[name];
    (stages as Record<string, unknown>)[name] = (ctx: never) => (override as (c: never, d: unknown) => unknown)(ctx, fallback);
  }
  return Object.freeze(stages);
}
