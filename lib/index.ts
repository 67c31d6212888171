export { createGateway } from './create-gateway';
export type { Gateway } from './create-gateway';
export type { RealtimeAttachOptions, RealtimeAttachment } from './doors/realtime/create-realtime-endpoint';
export type { GatewayOptions } from './config/gateway-options';
export type { MetricsOptions } from './ops/metrics-options';
export type { ResolvedConfig } from './pipeline/resolved-config';
export type { GssOptions, GssContext, GssContextFactory, GssToken, GssTokenCallback } from './db/connection/gss/gss-options';
export { GatewayError } from './errors/gateway-error';
export { GatewayConfigError } from './errors/gateway-config-error';
export { DatabaseUnreachableError } from './db/database-unreachable-error';
export { errorCatalogue } from './errors/error-catalogue';
export type { ErrorCode } from './errors/error-catalogue';
export type { Command, ReadCommand, GetCommand, AggregateList, Aggregate, Condition, FilterOp, OrderTerm, OperationName, PlanOptions } from './command/command';
export { operationOf } from './command/command';
export type { Identity } from './pipeline/identity';
export type { GatewayRequest } from './pipeline/gateway-request';
export type { Stages, StageOverrides, GatewayContext } from './pipeline/stage-types';
export type { StageName } from './pipeline/stage-names';
export type { Plan, ResultShape } from './pipeline/plan';
export type { Result } from './pipeline/result';
export type { SchemaCache, Table, Column, ForeignKey, DbFunction } from './schema/schema-types';
export { sql, ident, join, value as sqlValue, compileSql } from './sql/sql';
export type { Sql, CompiledQuery } from './sql/sql';
export { version } from './version';
// The typed fetch client is its own entry point, `tablegate/client` (docs/client.md); its types are
// here too for server code that shares them. Type-only: the server entry loads none of its code.
export type { TablegateClient, ClientResult, ClientOptions, GatewayErrorBody, GenericDatabase as ClientDatabase } from './client';
