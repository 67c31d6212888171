/**
 * A door: one way a caller reaches the gateway (docs/architecture.md, "Doors"). Each door is a
 * folder under lib/doors/ that implements this interface; createGateway picks one per mount from
 * the configuration, once, and the request handler runs it around the shared stages.
 *
 * A door owns what is its grammar's and nothing else: parsing a request into a Command (the parse
 * stage), answering a Result or an error over HTTP (its responder), its meaning of a database
 * error, the transaction-local settings its callers' SQL may read, and what it adds to the
 * description. The stages (policy, allow-list, compile, execute) speak only the Command and Plan
 * vocabulary and never ask which door a command came through: a door gives execute its hooks at
 * construction (ExecuteHooks), never a flag to branch on.
 */
import type { ServerResponse } from 'node:http';
import type { Command } from '../command/command';
import type { GatewayError } from '../errors/gateway-error';
import type { RequestSettings } from './database';
import type { GatewayRequest } from './gateway-request';
import type { Plan } from './plan';
import type { ResolvedConfig } from './resolved-config';
import type { SchemaCache } from '../schema/schema-types';
import type { Result } from './result';
import type { ExecuteContext, Stages } from './stage-types';

export interface Responder {
  /** Whether a request of this method has a body to read (the router has no body parser). */
  readsBody(method: string): boolean;
  /**
   * Writes a result: status, headers and body. A promise when it writes as rows arrive (a
   * streamed export); the request handler awaits it then.
   */
  send(res: ServerResponse, command: Command, plan: Pick<Plan, 'shape'>, result: Result, requestId: string): void | Promise<void>;
  /** Writes an error; `anonymous`: the caller had no credentials (a door may answer 401 then, not 403). */
  sendError(res: ServerResponse, err: unknown, requestId: string, anonymous: boolean): void;
}

/** What a door adds to execute: given once, at construction, so execute never asks who asked. */
export interface ExecuteHooks {
  /** The `request.*` settings the statement's transaction carries (docs/architecture.md, "Doors"); absent: none. */
  readonly requestSettings?: (ctx: ExecuteContext) => RequestSettings;
  /**
   * The door's own meaning of a database error, tried before the catalogue's (lib/db/to-gateway-error.ts):
   * an error to throw instead, or undefined to leave it to the catalogue.
   */
  readonly translateError?: (err: unknown) => GatewayError | undefined;
}

/** The query grammar the description documents for every table (lib/describe/openapi-document.ts). */
export interface DescribedGrammar {
  /** Filter operators, per column (text-like columns also take `contains`). */
  readonly filterOperators: readonly string[];
  /** Query parameters that are not column filters. */
  readonly reservedParameters: readonly string[];
  /** `POST /_batch` and `PATCH /{table}` with an array exist (the door has `expand`). */
  readonly batches?: boolean;
}

/** One operation's answer inside an expansion: its HTTP status and JSON body text (null: none, a 204). */
export interface OperationAnswer {
  readonly status: number;
  readonly body: string | null;
}

/** One single request of an expansion. */
export interface ExpandedOperation {
  /** What an error of this operation adds to its `details` (`{ operation: 2 }`, `{ row: 5 }`). */
  readonly where: Readonly<Record<string, unknown>>;
  /** The request with every reference to an earlier answer replaced by a stand-in: checked before any SQL runs. */
  readonly checked: GatewayRequest;
  /** The request to run, given the answers of the operations before it (undefined: skipped). */
  request(earlier: readonly (OperationAnswer | undefined)[]): GatewayRequest;
}

/**
 * A request that stands for several single requests run in order in ONE transaction as its caller
 * (docs/writing.md: batches, nested inserts, bulk updates). Each operation is parsed by the door's
 * own parse stage and goes through policy, allow-list, compile and execute like the single request.
 */
export interface Expansion {
  readonly operations: readonly ExpandedOperation[];
  /** A 404 an operation's answer gives (no visible row) skips it instead of failing the whole. */
  readonly skipsNotFound: boolean;
  /**
   * The operations are updates of one table by key that use no earlier answer (a bulk update): once
   * each has passed parse, policy and allow-list, they run as ONE statement (lib/command/combine-updates.ts)
   * and each is answered from its row of it, as its own statement would have answered it.
   */
  readonly oneStatement?: boolean;
  /** The answers, in order (undefined: skipped) -> the one response. */
  answer(answers: readonly (OperationAnswer | undefined)[]): OperationAnswer;
}

export interface Door extends Responder {
  /** The door's name: its folder under lib/doors/ (`rest`, ...). */
  readonly name: string;
  /** The parse stage: the door's grammar -> a Command (it may be replaced by `options.stages.parse`). */
  readonly parse: Stages['parse'];
  readonly execute: ExecuteHooks;
  /**
   * A command's query pattern as the door's grammar spells it (docs/allow-list.md): what an
   * allow-list line holds and dev mode's `x-gw-query-pattern` shows; undefined for a command
   * without one (a function call). Given to the allow-list stage at construction, so the stage
   * compares patterns and knows no grammar.
   */
  readonly pattern: (command: Command) => string | undefined;
  /** What the door adds to the description; absent: it documents the default grammar. */
  readonly describes?: DescribedGrammar;
  /**
   * Whether a request stands for several (an Expansion): undefined for a single request (cheap, no
   * body parsed), else the function that parses it, called once the caller is authenticated.
   * Absent: the door has none.
   */
  readonly expand?: (request: GatewayRequest, schema: SchemaCache, config: ResolvedConfig) => (() => Expansion) | undefined;
  /** With `expand`: one operation's Result -> its status and body, as `send` would answer it. */
  readonly render?: (command: Command, plan: Pick<Plan, 'shape'>, result: Result) => OperationAnswer;
  /** With `expand`: the body limit of a route that takes more than one request's body (`_batch`), else undefined. */
  readonly bodyLimit?: (path: string, config: ResolvedConfig) => number | undefined;
}
