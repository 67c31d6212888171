/**
 * The PostgREST door: PostgREST's URL grammar, headers and answers (docs/postgrest-dialect.md).
 * Parse: parse/ (reads, writes, calls into the shared Command vocabulary). Respond: respond/
 * (PostgREST's bodies, Content-Range, Preference-Applied, its error body and codes). Execute's
 * hooks: PostgREST's `request.*` settings, and its meaning of a `RAISE SQLSTATE 'PGRST'` and of
 * the statement checks it asks for (max-affected, a singular write).
 * The description is the default grammar's (it adds nothing of its own yet).
 */
import type { Door } from '../../pipeline/door';
import { queryPattern } from '../shared/query-pattern';
import { createPostgrestParseStage } from './parse/create-postgrest-parse-stage';
import { requestSettings } from './request-settings';
import { renderPostgrest } from './respond/render-postgrest';
import { sendPostgrest, sendPostgrestError } from './respond/send-postgrest';
import type { PostgrestVersion } from './respond/postgrest-error-body';
import { translateDatabaseError } from './translate-database-error';

/** `schemas` name the profiles in Content-Range etc.; `version`: whose wording errors take (`postgrest_version`). */
export function createPostgrestDoor(schemas: readonly string[], version: PostgrestVersion): Door {
  return {
    name: 'postgrest',
    parse: createPostgrestParseStage(),
    pattern: queryPattern,
    execute: { requestSettings, translateError: translateDatabaseError },
    // PUT upserts carry a body too.
    readsBody: (method) => method === 'POST' || method === 'PATCH' || method === 'PUT',
    send(res, command, plan, result) {
      if (result.stream) return refuseStream(command.kind, result.stream);
      sendPostgrest(res, renderPostgrest(command, plan, result, schemas));
    },
    sendError: (res, err, requestId, anonymous) => sendPostgrestError(res, err, requestId, anonymous, version),
  };
}

/** The dialect has no streamed export: a replacement stage that streams is a bug (500), never a misread body. */
async function refuseStream(kind: string, stream: { close(): Promise<void> }): Promise<void> {
  await stream.close();
  throw new Error(`a ${kind} command cannot be streamed by the PostgREST dialect`);
}
