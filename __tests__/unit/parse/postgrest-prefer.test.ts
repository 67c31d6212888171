/**
 * The PostgREST dialect's Prefer header of writes and calls (lib/doors/postgrest/parse/postgrest-prefer.ts)
 * and the response of a function's RAISE SQLSTATE 'PGRST' (lib/doors/postgrest/postgrest-error.ts).
 */
import { PostgrestError, raisedPostgrestError, RaisedPostgrestError } from '../../../lib/doors/postgrest/postgrest-error';
import { parsePostgrestPrefer, preferredTimeZone } from '../../../lib/doors/postgrest/parse/postgrest-prefer';

describe('parsePostgrestPrefer', () => {
  it('reads return, missing, resolution, tx and lists what it applied', () => {
    const p = parsePostgrestPrefer('return=representation, missing=default, resolution=merge-duplicates, tx=rollback', 'insert');
    expect(p).toMatchObject({ returnMode: 'representation', missingDefault: true, rollback: true, maxAffected: null });
    expect(p.raw.get('resolution')).toBe('merge-duplicates');
    // PostgREST's order (Preferences.hs, prefAppliedHeader), whatever the order written.
    expect(p.applied).toEqual(['resolution=merge-duplicates', 'missing=default', 'return=representation', 'tx=rollback']);
    expect(parsePostgrestPrefer('max-affected=2, timezone=UTC, handling=strict, tx=commit, count=exact, return=minimal', 'write').applied).toEqual([
      'return=minimal', 'count=exact', 'tx=commit', 'handling=strict', 'timezone=UTC', 'max-affected=2',
    ]);
  });

  it('defaults to return=minimal; ignores unknown or invalid preferences unless handling=strict', () => {
    expect(parsePostgrestPrefer(undefined, 'write')).toMatchObject({ returnMode: 'minimal', applied: [] });
    expect(parsePostgrestPrefer('return=everything, nonsense', 'write').returnMode).toBe('minimal');
    expect(() => parsePostgrestPrefer('handling=strict, return=everything', 'write')).toThrow(PostgrestError);
    try {
      parsePostgrestPrefer('handling=strict, nonsense', 'write');
    } catch (e) {
      expect((e as PostgrestError).pgrstCode).toBe('PGRST122');
    }
  });

  it('honours max-affected only with handling=strict and not on inserts; params=single-object only on calls', () => {
    expect(parsePostgrestPrefer('max-affected=5', 'write').maxAffected).toBeNull();
    expect(parsePostgrestPrefer('handling=strict, max-affected=5', 'write').maxAffected).toBe(5);
    expect(parsePostgrestPrefer('handling=strict, max-affected=5', 'insert').maxAffected).toBeNull();
    expect(parsePostgrestPrefer('params=single-object', 'call', 12).singleObject).toBe(true);
    expect(parsePostgrestPrefer('params=single-object', 'write', 12).singleObject).toBe(false);
    // PostgREST 13 removed it: an unknown preference there.
    expect(parsePostgrestPrefer('params=single-object', 'call', 13).singleObject).toBe(false);
    expect(() => parsePostgrestPrefer('params=single-object, handling=strict', 'call', 13)).toThrow(PostgrestError);
  });

  it('timezone= is applied when it names a time zone, else ignored (PGRST122 with handling=strict)', () => {
    expect(parsePostgrestPrefer('timezone=America/New_York', 'write').applied).toEqual(['timezone=America/New_York']);
    expect(parsePostgrestPrefer('timezone=UTC', 'call').applied).toEqual(['timezone=UTC']);
    for (const bad of ['Not/AZone', '+05:00', "UTC'; --", 'x'.repeat(80)]) {
      expect(parsePostgrestPrefer(`timezone=${bad}`, 'write').applied).toEqual([]);
      expect(() => parsePostgrestPrefer(`timezone=${bad}, handling=strict`, 'write')).toThrow(/Invalid preferences/);
    }
    expect(preferredTimeZone('timezone=Asia/Tokyo, count=exact')).toBe('Asia/Tokyo');
    expect(preferredTimeZone('timezone=Asia/Nowhere')).toBeUndefined();
  });

  it('remembers checked time zone names without changing an answer, also past its bound', () => {
    for (let round = 0; round < 2; round++) {
      expect(preferredTimeZone('timezone=Asia/Tokyo')).toBe('Asia/Tokyo');
      expect(preferredTimeZone('timezone=Asia/Nowhere')).toBeUndefined();
    }
    // More distinct names than the bound (1,000): the cache is cleared, answers stay right.
    for (let i = 0; i < 1100; i++) expect(preferredTimeZone(`timezone=Etc/Nowhere${i}`)).toBeUndefined();
    expect(preferredTimeZone('timezone=Europe/Paris')).toBe('Europe/Paris');
    expect(preferredTimeZone('timezone=Asia/Nowhere')).toBeUndefined();
  });
});

describe('raisedPostgrestError', () => {
  const raise = (message: string, detail: string | undefined) => Object.assign(new Error(message), { code: 'PGRST', detail });

  it('takes status, headers and body from the JSON message and detail', () => {
    const e = raisedPostgrestError(raise('{"code":"123","message":"Payment Required","details":"d","hint":"h"}', '{"status":402,"headers":{"X-A":"b"}}'));
    expect(e).toBeInstanceOf(RaisedPostgrestError);
    const r = e as RaisedPostgrestError;
    expect({ status: r.pgrstStatus, body: r.body, headers: r.headers }).toEqual({ status: 402, body: { code: '123', message: 'Payment Required', details: 'd', hint: 'h' }, headers: { 'X-A': 'b' } });
  });

  it('is PGRST121 for a message or detail that is not the JSON PostgREST reads, or a header that could split the response', () => {
    for (const [m, d] of [
      ['not json', '{"status":402}'],
      ['{"message":"x"}', 'nope'],
      ['{"message":"x"}', '{"status":99}'],
      ['{"message":"x"}', '{"status":400,"headers":{"X-A":"a\\r\\nSet-Cookie: x=1"}}'],
      ['{"message":"x"}', '{"status":400,"headers":{"Bad Name":"a"}}'],
    ] as const) {
      expect((raisedPostgrestError(raise(m, d)) as PostgrestError).pgrstCode).toBe('PGRST121');
    }
  });

  it('leaves any other error alone', () => {
    expect(raisedPostgrestError(Object.assign(new Error('x'), { code: 'P0001' }))).toBeUndefined();
  });
});
