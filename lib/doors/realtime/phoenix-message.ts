/**
 * Phoenix channel messages as @supabase/realtime-js sends and reads them (docs/postgrest-dialect.md,
 * "Realtime"): serializer `vsn=2.0.0` is a JSON array `[join_ref, ref, topic, event, payload]`,
 * `vsn=1.0.0` a JSON object with the same five fields. Binary frames (realtime-js sends them for
 * Broadcast only) are not read. Never: throws on a message it cannot read (undefined instead).
 */

export type Vsn = '1.0.0' | '2.0.0';

export interface PhoenixMessage {
  readonly joinRef: string | null;
  readonly ref: string | null;
  readonly topic: string;
  readonly event: string;
  readonly payload: Readonly<Record<string, unknown>>;
}

/** The vsn query parameter: realtime-js sends 2.0.0 (1.0.0 when asked); absent means 1.0.0, as Phoenix does. */
export function readVsn(text: string | null): Vsn | undefined {
  if (text === null || text === '1.0.0') return '1.0.0';
  return text === '2.0.0' ? '2.0.0' : undefined;
}

export function readMessage(text: string, vsn: Vsn): PhoenixMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  let fields: unknown[];
  if (vsn === '2.0.0') {
    if (!Array.isArray(value) || value.length !== 5) return undefined;
    fields = value;
  } else {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    const o = value as Record<string, unknown>;
    fields = [o['join_ref'] ?? null, o['ref'] ?? null, o['topic'], o['event'], o['payload']];
  }
  const [joinRef, ref, topic, event, payload] = fields;
  if (typeof topic !== 'string' || typeof event !== 'string') return undefined;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  return { joinRef: refText(joinRef), ref: refText(ref), topic, event, payload: payload as Record<string, unknown> };
}

/** One message's text; `payload` is JSON text already (an event's payload is made once per group). */
export function writeMessage(vsn: Vsn, joinRef: string | null, ref: string | null, topic: string, event: string, payload: string): string {
  if (vsn === '2.0.0') return `[${JSON.stringify(joinRef)},${JSON.stringify(ref)},${JSON.stringify(topic)},${JSON.stringify(event)},${payload}]`;
  return `{"join_ref":${JSON.stringify(joinRef)},"ref":${JSON.stringify(ref)},"topic":${JSON.stringify(topic)},"event":${JSON.stringify(event)},"payload":${payload}}`;
}

function refText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return null;
}
