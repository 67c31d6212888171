import { toGatewayError } from '../../../lib/db/to-gateway-error';
import { toPublicError } from '../../../lib/http/send-error';
import { ConnectionPolicyError, GssCircuitOpenError } from '../../../lib/db/connection/connection-policy-error';

const pgError = (code: string, message = 'boom', extra: Record<string, unknown> = {}) => Object.assign(new Error(message), { code, ...extra });

describe('SQLSTATE -> contract code', () => {
  it.each([
    ['23505', 'CONFLICT', 409],
    ['23503', 'CONFLICT', 409],
    ['23P01', 'CONFLICT', 409],
    ['23502', 'VALIDATION_ERROR', 400],
    ['23514', 'VALIDATION_ERROR', 400],
    ['22P02', 'VALIDATION_ERROR', 400],
    ['22003', 'VALIDATION_ERROR', 400],
    ['P0001', 'VALIDATION_ERROR', 400],
    ['42501', 'FORBIDDEN', 403],
    ['57014', 'TIMEOUT', 504],
    ['40001', 'CONFLICT', 409],
    ['40P01', 'CONFLICT', 409],
    ['08006', 'SERVICE_UNAVAILABLE', 503],
    ['53300', 'SERVICE_UNAVAILABLE', 503],
    ['57P01', 'SERVICE_UNAVAILABLE', 503],
  ])('%s -> %s', (sqlstate, code, status) => {
    const e = toGatewayError(pgError(sqlstate, 'duplicate key value violates unique constraint "users_email_key"', { constraint: 'users_email_key' }));
    expect(e?.code).toBe(code);
    expect(e?.status).toBe(status);
  });

  it('names the constraint and column where PostgreSQL does, without SQL text', () => {
    const e = toGatewayError(pgError('23502', 'null value in column "email" of relation "users" violates not-null constraint', { column: 'email', table: 'users' }))!;
    expect(e.details).toEqual({ sqlstate: '23502', column: 'email', table: 'users' });
    expect(e.message).toMatch(/^Null value in column "email"/);
  });

  it('maps connection failures without SQLSTATE to SERVICE_UNAVAILABLE with Retry-After', () => {
    const e = toGatewayError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))!;
    expect(e.code).toBe('SERVICE_UNAVAILABLE');
    expect(e.headers['Retry-After']).toBe('1');
    expect(toGatewayError(new Error('timeout exceeded when trying to connect'))?.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('maps the open GSS circuit to SERVICE_UNAVAILABLE with the remaining cooldown in Retry-After', () => {
    const e = toGatewayError(new GssCircuitOpenError(12001))!;
    expect([e.code, e.status, e.headers['Retry-After']]).toEqual(['SERVICE_UNAVAILABLE', 503, '13']);
    expect(toGatewayError(new GssCircuitOpenError(10))!.headers['Retry-After']).toBe('1');
  });

  it('maps connection-policy refusals and TLS failures to SERVICE_UNAVAILABLE without their detail', () => {
    const refused = toGatewayError(new ConnectionPolicyError('the server asked for MD5 password authentication, which auth_md5=false forbids', 'auth_md5'))!;
    expect([refused.code, refused.status]).toEqual(['SERVICE_UNAVAILABLE', 503]);
    expect(refused.message).not.toMatch(/md5/i);
    expect(toGatewayError(Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' }))?.code).toBe('SERVICE_UNAVAILABLE');
    expect(toGatewayError(Object.assign(new Error("Hostname/IP does not match certificate's altnames"), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }))?.code).toBe('SERVICE_UNAVAILABLE');
    expect(toGatewayError(new Error('The server does not support SSL connections'))?.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('leaves unknown errors to be masked as INTERNAL_ERROR with the request id', () => {
    expect(toGatewayError(pgError('XX000', 'internal error at SELECT secret FROM t'))).toBeUndefined();
    const spy = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const masked = toPublicError(new Error('SELECT password FROM users'), 'req-1');
    expect(masked.toJSON()).toEqual({ code: 'INTERNAL_ERROR', message: 'The gateway failed to handle the request.', details: { request_id: 'req-1' } });
    expect(spy).toHaveBeenCalledWith(expect.stringContaining('req-1'));
    spy.mockRestore();
  });
});

describe('database faults -> SERVICE_UNAVAILABLE with Retry-After, never INTERNAL_ERROR', () => {
  it.each([
    ['57P01 admin_shutdown', pgError('57P01', 'terminating connection due to administrator command', { severity: 'FATAL' })],
    ['57P02 crash_shutdown', pgError('57P02', 'terminating connection because of crash of another server process')],
    ['57P03 cannot_connect_now', pgError('57P03', 'the database system is starting up', { severity: 'FATAL' })],
    ['08006 connection_failure', pgError('08006', 'connection failure')],
    ['53300 too_many_connections', pgError('53300', 'sorry, too many clients already')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['a connect timeout', new Error('Connection terminated due to connection timeout')],
    ["pg's own connect timeout", new Error('timeout expired')],
    ['a client that already failed', new Error('Client has encountered a connection error and is not queryable')],
    ['a closed client', new Error('Client was closed and is not queryable')],
    ['ECONNRESET', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['a missing Unix socket', Object.assign(new Error('connect ENOENT /var/run/postgresql/.s.PGSQL.5432'), { code: 'ENOENT' })],
    ['every address refused', new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })], 'connect failed')],
  ])('%s', (_name, err) => {
    const e = toGatewayError(err);
    expect([e?.code, e?.status, e?.headers['Retry-After']]).toEqual(['SERVICE_UNAVAILABLE', 503, '1']);
  });

  it('adds Retry-After only to SERVICE_UNAVAILABLE', () => {
    expect(toGatewayError(pgError('23505'))?.headers).toEqual({});
    expect(toGatewayError(pgError('57014'))?.headers).toEqual({});
  });
});
