/**
 * The UTC offset that PostgreSQL applies when it prints a timestamptz in a session TimeZone,
 * as current_setting('TimeZone') names it.
 *
 * - IANA names (and their aliases, e.g. `EST5EDT`, `Etc/GMT+3`): the offset comes from Intl,
 *   i.e. from Node's ICU copy of the tz database. PostgreSQL reads its own copy (its build's or the
 *   system's), so the two only agree as far as the tzdata versions agree (recent dates always;
 *   historical ones only when neither copy changed them).
 * - POSIX strings without daylight-saving rules (`UTC+3`, `<-07>+07` from `SET TIME ZONE -7`,
 *   `+05:30`): a fixed offset with POSIX's sign, positive west of Greenwich (TimeZone `+05:30` is
 *   UTC-05:30). Parsed here, because Intl rejects them or (offset zones, ES2024) reads the
 *   sign the other way round.
 * - Anything else (`Factory`, POSIX strings with DST rules): an Error naming the zone.
 *
 * PostgreSQL uses LMT before a zone's first transition, with its seconds (Europe/Berlin in 1890 is
 * +00:53:28), and ICU agrees; PostgreSQL repeats a zone's final rule in 400-year cycles beyond the
 * tzdata, which is how instants past JavaScript's Date range (year 275760) are looked up here.
 */

const MS_PER_DAY = 86_400_000;
/** 400 Gregorian years: the calendar, and with it every tz rule, repeats after this. */
const MS_PER_400_YEARS = 146_097 * MS_PER_DAY;
const MAX_DATE_MS = 8.64e15;
/** Bounded caches: the zone names come from sessions, the days from data. */
const MAX_ZONES = 256;
const MAX_DAYS_PER_ZONE = 4096;

// std name (`<...>` or three or more letters, optional) then [+-]hh[:mm[:ss]], nothing after.
const POSIX_FIXED = /^(?:<[A-Za-z0-9:+-]+>|[A-Za-z]{3,})?([+-]?)(\d{1,2})(?::(\d{1,2})(?::(\d{1,2}))?)?$/;
const GMT_OFFSET = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/;
const UTC_NAMES = new Set(['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT']);

type Zone =
  | { readonly kind: 'fixed'; readonly seconds: number }
  | { readonly kind: 'intl'; readonly name: string; readonly format: Intl.DateTimeFormat; readonly days: Map<number, number> };

const zones = new Map<string, Zone>();

/** Seconds east of UTC in `timeZone` at the instant `epochMs` (milliseconds since 1970, UTC). */
export function utcOffsetSeconds(timeZone: string, epochMs: number): number {
  const zone = zones.get(timeZone) ?? resolveZone(timeZone);
  if (zone.kind === 'fixed') return zone.seconds;
  // One lookup per UTC day: when a day starts and ends on the same offset it holds throughout.
  // (tzdata 2025b has no zone that changes and changes back within one UTC day.) Days with a
  // transition are marked NaN and looked up per instant.
  const day = Math.floor(epochMs / MS_PER_DAY);
  const cached = zone.days.get(day);
  if (cached !== undefined && !Number.isNaN(cached)) return cached;
  if (cached === undefined) {
    const start = intlOffset(zone, day * MS_PER_DAY);
    const end = intlOffset(zone, day * MS_PER_DAY + MS_PER_DAY - 1);
    if (zone.days.size >= MAX_DAYS_PER_ZONE) zone.days.clear();
    zone.days.set(day, start === end ? start : NaN);
    if (start === end) return start;
  }
  return intlOffset(zone, epochMs);
}

function resolveZone(timeZone: string): Zone {
  const zone = posixFixedZone(timeZone) ?? intlZone(timeZone);
  if (zones.size >= MAX_ZONES) zones.clear();
  zones.set(timeZone, zone);
  return zone;
}

function posixFixedZone(timeZone: string): Zone | undefined {
  const match = POSIX_FIXED.exec(timeZone);
  if (!match) return undefined;
  const west = Number(match[2]) * 3600 + Number(match[3] ?? 0) * 60 + Number(match[4] ?? 0);
  if (Number(match[3] ?? 0) > 59 || Number(match[4] ?? 0) > 59 || west > 24 * 3600) {
    throw new Error(`unsupported time zone "${timeZone}": offset out of range`);
  }
  return { kind: 'fixed', seconds: match[1] === '-' ? west : -west };
}

function intlZone(timeZone: string): Zone {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
  } catch {
    throw new Error(`unsupported time zone "${timeZone}": not an IANA time zone this Node.js (Intl) knows`);
  }
  if (UTC_NAMES.has(format.resolvedOptions().timeZone)) return { kind: 'fixed', seconds: 0 };
  return { kind: 'intl', name: timeZone, format, days: new Map() };
}

function intlOffset(zone: { readonly name: string; readonly format: Intl.DateTimeFormat }, epochMs: number): number {
  let ms = epochMs;
  if (ms >= MAX_DATE_MS) ms -= Math.ceil((ms - MAX_DATE_MS + 1) / MS_PER_400_YEARS) * MS_PER_400_YEARS;
  const part = zone.format.formatToParts(ms).find((p) => p.type === 'timeZoneName');
  const match = part ? GMT_OFFSET.exec(part.value) : null;
  if (!match) throw new Error(`unexpected Intl offset "${part?.value ?? ''}" for time zone "${zone.name}"`);
  if (match[1] === undefined) return 0;
  const seconds = Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4] ?? 0);
  return match[1] === '-' ? -seconds : seconds;
}
