/**
 * The `Prefer` header of the PostgREST dialect's writes and calls (docs/postgrest-dialect.md,
 * "Preferences"). In: the header text (parsed by parse-prefer.ts, the default dialect's), what the
 * request is. Out: the preferences as closed values, and the ones applied (the response's
 * Preference-Applied header). Never: ignores a preference it cannot honour when the caller asked
 * for `handling=strict` (PGRST122); an unknown or invalid one is ignored otherwise, as PostgREST does.
 */
import { PostgrestError } from '../postgrest-error';
import { parsePrefer } from '../../shared/parse-prefer';
import { clip } from './parse-select';

export interface PostgrestPrefer {
  readonly raw: ReadonlyMap<string, string>;
  readonly returnMode: 'minimal' | 'headers-only' | 'representation';
  readonly missingDefault: boolean;
  readonly maxAffected: number | null;
  readonly rollback: boolean;
  readonly singleObject: boolean;
  /** A valid `count=` was given. */
  readonly count: boolean;
  readonly applied: readonly string[];
}

const valid: Readonly<Record<string, (v: string) => boolean>> = {
  return: (v) => v === 'minimal' || v === 'headers-only' || v === 'representation',
  count: (v) => v === 'exact' || v === 'planned' || v === 'estimated',
  resolution: (v) => v === 'merge-duplicates' || v === 'ignore-duplicates',
  missing: (v) => v === 'default' || v === 'null',
  handling: (v) => v === 'strict' || v === 'lenient',
  tx: (v) => v === 'commit' || v === 'rollback',
  'max-affected': (v) => /^\d{1,9}$/.test(v),
  params: (v) => v === 'single-object',
  timezone: (v) => isTimeZone(v),
};

/**
 * A time zone name PostgreSQL and the IANA database know (`America/New_York`, `UTC`,
 * `Etc/GMT+5`): letters, digits and `_ + - /`, which Intl (Node's IANA data) accepts. An offset
 * or a POSIX rule is not a name. Checked before it reaches SQL.
 */
export function isTimeZone(name: string): boolean {
  if (name.length > 64 || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return false;
  const known = checkedZones.get(name);
  if (known !== undefined) return known;
  let valid: boolean;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    valid = true;
  } catch {
    valid = false;
  }
  if (checkedZones.size >= maxCheckedZones) checkedZones.clear();
  checkedZones.set(name, valid);
  return valid;
}

/**
 * Names already checked: making an Intl.DateTimeFormat costs tens of microseconds, and a request
 * asks twice (parse, then the transaction's settings). Bounded (cleared when full), since the
 * names are caller text.
 */
const checkedZones = new Map<string, boolean>();
const maxCheckedZones = 1000;

/** `Prefer: timezone=<name>` when the name is a time zone (request-settings.ts sets it for the transaction). */
export function preferredTimeZone(header: string | undefined): string | undefined {
  const name = parsePrefer(header).get('timezone');
  return name !== undefined && isTimeZone(name) ? name : undefined;
}

/**
 * `what`: an insert (resolution, missing apply), another write, or a function call (params
 * applies). `version`: PostgREST 13 removed `params=single-object` (its changelog, #3757), so
 * with 13 it is an unknown preference.
 */
export function parsePostgrestPrefer(header: string | undefined, what: 'insert' | 'write' | 'call', version: 12 | 13 = 13): PostgrestPrefer {
  const raw = parsePrefer(header);
  const strict = raw.get('handling') === 'strict';
  const known = (name: string): boolean => valid[name] !== undefined && (name !== 'params' || version === 12);
  const invalid = [...raw.entries()].filter(([name, value]) => !known(name) || !valid[name]!(value));
  if (strict && invalid.length) {
    throw new PostgrestError('PGRST122', 'Invalid preferences given with handling=strict', { details: `Invalid preferences: ${invalid.map(([n, v]) => clip(v === '' ? n : `${n}=${v}`, 40)).join(', ')}` });
  }
  const get = (name: string): string | undefined => {
    const v = raw.get(name);
    return v !== undefined && known(name) && valid[name]!(v) ? v : undefined;
  };
  // Preference-Applied in PostgREST's order (its Preferences.hs, prefAppliedHeader): resolution,
  // missing, return, count, tx, handling, timezone, max-affected.
  const applied: string[] = [];
  const resolution = what === 'insert' ? get('resolution') : undefined;
  if (resolution !== undefined) applied.push(`resolution=${resolution}`);
  const missingDefault = what === 'insert' && get('missing') === 'default';
  if (missingDefault) applied.push('missing=default');
  const returnMode = (get('return') ?? 'minimal') as PostgrestPrefer['returnMode'];
  if (what !== 'call' && get('return') !== undefined) applied.push(`return=${returnMode}`);
  const count = get('count');
  if (count !== undefined) applied.push(`count=${count}`);
  const tx = get('tx');
  if (tx !== undefined) applied.push(`tx=${tx}`);
  if (strict) applied.push('handling=strict');
  const timeZone = get('timezone');
  if (timeZone !== undefined) applied.push(`timezone=${timeZone}`);
  // max-affected is honoured with handling=strict only, as PostgREST does.
  const maxText = what !== 'insert' && strict ? get('max-affected') : undefined;
  if (maxText !== undefined) applied.push(`max-affected=${maxText}`);
  const singleObject = what === 'call' && get('params') === 'single-object';
  if (singleObject) applied.push('params=single-object');
  // The raw map as parseOnConflict reads it: only a valid resolution.
  const forConflict = new Map<string, string>(resolution === undefined ? [] : [['resolution', resolution]]);
  return Object.freeze({ raw: forConflict, returnMode, missingDefault, maxAffected: maxText === undefined ? null : Number(maxText), rollback: tx === 'rollback', singleObject, count: count !== undefined, applied: Object.freeze(applied) });
}
