/**
 * The media type of each body a PostgREST read or write answers with, as PostgREST spells it:
 * what a plan's `for=` names, what the plan's own media type echoes, and what the representation
 * a plan explains is parsed as (docs/postgrest-dialect.md, "Plans").
 */
export const bodyMediaTypes = { json: 'application/json', object: 'application/vnd.pgrst.object+json', csv: 'text/csv' } as const;
