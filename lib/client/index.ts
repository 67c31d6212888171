/**
 * `tablegate/client`: the typed fetch client, for browsers and Node (docs/client.md). Public
 * surface only. Never: imports anything outside lib/client (a unit test checks the module graph).
 */
export { createClient } from './create-client';
export { TablegateClientError, isTablegateClientError, gatewayErrorCodes, clientOnlyErrorCodes } from './client-error';
export type { GatewayErrorCode, ClientErrorCode, GatewayErrorBody } from './client-error';
export type { ClientOptions, FetchLike } from './send-request';
export type { ChangeEvent, SubscribeOptions, Subscription } from './client-types';
export type {
  TablegateClient,
  TableClient,
  ListQuery,
  ClientResult,
  Success,
  Failure,
  ListBody,
  RowBody,
  BatchBody,
  EmptyBody,
  Selected,
  GetOptions,
  ReturningOptions,
  UpsertOptions,
  BatchOperation,
  BatchReference,
  BatchAnswer,
} from './client-types';
export type {
  Json,
  GenericDatabase,
  AnyDatabase,
  GenericRelationship,
  TableName,
  RowOf,
  InsertOf,
  UpdateOf,
  RelationshipsOf,
  ColumnOf,
  ExpandName,
  Expanded,
  FunctionName,
  ArgsOf,
  ReturnsOf,
  KeyValue,
  SortName,
  NestedInsertOf,
} from './database-types';
