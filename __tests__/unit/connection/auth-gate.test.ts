/**
 * The gate between the server and node-postgres during start-up, on byte sequences as a server
 * sends them (PostgreSQL manual, "Message Formats"). The behaviour against real servers is in
 * __tests__/integration/connection-*.test.ts; these cases pin the protocol handling itself:
 * framing across chunks, refusals before anything is answered, GSS tokens and their order.
 */
import { AuthGate, type GatePolicy, type GssConversation } from '../../../lib/db/connection/auth-gate';
import { resolveAuthPolicy } from '../../../lib/db/connection/auth-policy';
import type { AuthMode, ChannelBinding } from '../../../lib/db/connection/connection-settings';

function auth(code: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const b = Buffer.alloc(9 + payload.length);
  b.write('R', 0);
  b.writeUInt32BE(8 + payload.length, 1);
  b.writeInt32BE(code, 5);
  payload.copy(b, 9);
  return b;
}
function message(type: string, payload: Buffer = Buffer.alloc(0)): Buffer {
  const b = Buffer.alloc(5 + payload.length);
  b.write(type, 0);
  b.writeUInt32BE(4 + payload.length, 1);
  payload.copy(b, 5);
  return b;
}
const sasl = (...mechanisms: string[]) => auth(10, Buffer.from(`${mechanisms.join('\0')}\0\0`));
const readyForQuery = message('Z', Buffer.from('I'));

function setup(options: { mode?: AuthMode; channelBinding?: ChannelBinding; tls?: boolean; gss?: GssConversation | string } = {}) {
  const forwarded: Buffer[] = [];
  const sent: Buffer[] = [];
  const failures: Error[] = [];
  const policy: GatePolicy = {
    auth: resolveAuthPolicy(options.mode ?? 'default', {}),
    channelBinding: options.channelBinding ?? 'prefer',
    startGss: () => options.gss ?? 'no GSS provider',
  };
  const gate = new AuthGate(policy, {
    forward: (b) => forwarded.push(Buffer.from(b)),
    send: (b) => sent.push(Buffer.from(b)),
    fail: (e) => failures.push(e),
    tlsInUse: () => options.tls ?? true,
  });
  return { gate, forwarded: () => Buffer.concat(forwarded), sent, failures };
}

describe('AuthGate', () => {
  it('frames messages split across chunks and passes everything through after AuthenticationOk', () => {
    const t = setup();
    const stream = Buffer.concat([auth(5, Buffer.from([1, 2, 3, 4])), auth(0), readyForQuery, message('T', Buffer.from('rest'))]);
    for (let i = 0; i < stream.length; i += 3) t.gate.push(stream.subarray(i, i + 3));
    expect(t.forwarded().equals(stream)).toBe(true);
    expect(t.failures).toEqual([]);
  });

  it('refuses a forbidden mechanism before node-postgres sees the request', () => {
    const t = setup({ mode: 'scram_only' });
    t.gate.push(auth(5, Buffer.from([1, 2, 3, 4])));
    expect(t.forwarded().length).toBe(0);
    expect(t.failures.map((e) => e.message)).toEqual([
      'database connection refused by the connection policy: the server asked for MD5 password authentication (pg_hba.conf method md5), which auth_mode=scram_only does not allow (set auth_md5=true to allow it)',
    ]);
    expect((t.failures[0] as Error & { key?: string }).key).toBe('auth_md5');
    // Nothing after a refusal is passed on.
    t.gate.push(auth(0));
    expect(t.forwarded().length).toBe(0);
  });

  it('refuses a cleartext request by default and under channel_binding=require', () => {
    const t = setup();
    t.gate.push(auth(3));
    expect(t.failures[0]?.message).toMatch(/cleartext password.*only with auth_cleartext=true/);
  });

  it('channel_binding=require: SCRAM-SHA-256-PLUS must be offered over TLS, chosen, and finished', () => {
    const noPlus = setup({ channelBinding: 'require' });
    noPlus.gate.push(sasl('SCRAM-SHA-256'));
    expect(noPlus.failures[0]?.message).toMatch(/offers only SCRAM-SHA-256, not SCRAM-SHA-256-PLUS/);

    const plain = setup({ channelBinding: 'require', tls: false });
    plain.gate.push(sasl('SCRAM-SHA-256'));
    expect(plain.failures[0]?.message).toMatch(/not encrypted/);

    const chosenWrong = setup({ channelBinding: 'require' });
    chosenWrong.gate.push(sasl('SCRAM-SHA-256-PLUS', 'SCRAM-SHA-256'));
    expect(chosenWrong.gate.checkSaslMechanism('SCRAM-SHA-256')?.message).toMatch(/chose SCRAM-SHA-256 instead of SCRAM-SHA-256-PLUS/);

    const bound = setup({ channelBinding: 'require' });
    bound.gate.push(sasl('SCRAM-SHA-256-PLUS', 'SCRAM-SHA-256'));
    expect(bound.gate.checkSaslMechanism('SCRAM-SHA-256-PLUS')).toBeUndefined();
    bound.gate.push(Buffer.concat([auth(11, Buffer.from('r=x')), auth(12, Buffer.from('v=y')), auth(0), readyForQuery]));
    expect(bound.failures).toEqual([]);

    const trust = setup({ channelBinding: 'require' });
    trust.gate.push(auth(0));
    expect(trust.failures[0]?.message).toMatch(/without channel binding \(no authentication exchange at all/);
  });

  it('refuses AuthenticationOk after SCRAM without the server signature (SASLFinal)', () => {
    const t = setup();
    t.gate.push(sasl('SCRAM-SHA-256'));
    t.gate.checkSaslMechanism('SCRAM-SHA-256');
    t.gate.push(Buffer.concat([auth(11, Buffer.from('r=x')), auth(0)]));
    expect(t.failures[0]?.message).toMatch(/ended SCRAM authentication without its final message/);
  });

  it('answers GSS requests itself, in order, and holds later messages until the token is sent', async () => {
    const calls: string[] = [];
    let release!: () => void;
    const gss: GssConversation = {
      complete: true,
      first: () => new Promise((resolve) => (release = () => resolve(Buffer.from('tok1')))),
      next: async (challenge) => {
        calls.push(`next:${challenge.toString()}`);
        return Buffer.alloc(0); // nothing more to send
      },
    };
    const t = setup({ gss });
    t.gate.push(Buffer.concat([auth(7), auth(8, Buffer.from('srv')), auth(0), readyForQuery]));
    expect(t.forwarded().length).toBe(0); // node-postgres never sees code 7 or 8 (its parser would throw)
    expect(t.gate.gssStarted).toBe(true);
    release();
    await new Promise((r) => setImmediate(r));
    expect(t.sent.map((b) => [b.toString('latin1', 0, 1), b.readUInt32BE(1), b.subarray(5).toString()])).toEqual([['p', 8, 'tok1']]);
    expect(calls).toEqual(['next:srv']);
    expect(t.forwarded().equals(Buffer.concat([auth(0), readyForQuery]))).toBe(true);
    expect(t.failures).toEqual([]);
  });

  it('fails a GSS request without a provider, or when the provider fails, or before mutual authentication completed', async () => {
    const none = setup();
    none.gate.push(auth(7));
    expect(none.failures[0]?.message).toMatch(/no GSS provider/);

    const broken = setup({ gss: { complete: undefined, first: async () => Promise.reject(new Error('KDC down')), next: async () => undefined } });
    broken.gate.push(auth(7));
    await new Promise((r) => setImmediate(r));
    expect(broken.failures[0]?.message).toBe('KDC down');

    const early = setup({ gss: { complete: false, first: async () => Buffer.from('t'), next: async () => undefined } });
    early.gate.push(Buffer.concat([auth(7), auth(0)]));
    await new Promise((r) => setImmediate(r));
    expect(early.failures[0]?.message).toMatch(/before mutual authentication completed/);
  });

  it('refuses GSS under scram_only and under channel_binding=require', () => {
    const scramOnly = setup({ mode: 'scram_only' });
    scramOnly.gate.push(auth(7));
    expect(scramOnly.failures[0]?.message).toMatch(/GSSAPI authentication \(pg_hba\.conf method gss\), which auth_mode=scram_only does not allow/);
    const bound = setup({ channelBinding: 'require' });
    bound.gate.push(auth(9));
    expect(bound.failures[0]?.message).toMatch(/channel_binding=require, but the server asked for SSPI authentication/);
  });

  it('refuses obsolete and unknown requests, and malformed lengths', () => {
    const krb = setup();
    krb.gate.push(auth(2));
    expect(krb.failures[0]?.message).toMatch(/Kerberos V5 authentication .*removed in 9\.4/);
    const unknown = setup();
    unknown.gate.push(auth(42));
    expect(unknown.failures[0]?.message).toMatch(/unknown authentication type \(code 42\)/);
    const bad = setup();
    bad.gate.push(Buffer.from([0x52, 0xff, 0xff, 0xff, 0xff]));
    expect(bad.failures[0]?.message).toMatch(/malformed message/);
  });

  it('passes non-authentication messages (errors, notices) through before AuthenticationOk', () => {
    const t = setup();
    const error = message('E', Buffer.from('SFATAL\0C28000\0Mno pg_hba.conf entry\0\0'));
    t.gate.push(error);
    expect(t.forwarded().equals(error)).toBe(true);
  });
});
