/** What a SQLSTATE means beyond its gateway code, from one module (lib/errors/sqlstate-meaning.ts). */
import { GatewayError } from '../../../lib/errors/gateway-error';
import { isConnectionLostSqlstate, isLoginRefusal, isRowError, isSchemaDrift, isUnresolvedCall } from '../../../lib/errors/sqlstate-meaning';

const pg = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error('x'), { code, ...extra });
const gateway = (code: 'NOT_FOUND' | 'RPC_SIGNATURE_MISMATCH' | 'PARSE_ERROR', cause: unknown) => new GatewayError(code, 'm', { cause });

describe('sqlstate meaning', () => {
  it('row errors: classes 22 and 23, 21000 and 42501 only', () => {
    expect(['22P02', '22003', '23505', '21000', '42501'].map((code) => isRowError(pg(code)))).toEqual([true, true, true, true, true]);
    expect(['57014', '42P01', '21001', '40001'].map((code) => isRowError(pg(code)))).toEqual([false, false, false, false]);
    expect(isRowError(null)).toBe(false);
  });

  it('an unresolved call is 42883/42725 without a function context', () => {
    expect(isUnresolvedCall(pg('42883'))).toBe(true);
    expect(isUnresolvedCall(pg('42725'))).toBe(true);
    expect(isUnresolvedCall(pg('42883', { where: 'PL/pgSQL function f() line 1' }))).toBe(false);
    expect(isUnresolvedCall(pg('42P01'))).toBe(false);
  });

  it('schema drift: a vanished table or column, or a call execute reported as no longer resolving', () => {
    expect(isSchemaDrift(gateway('NOT_FOUND', pg('42P01')))).toBe(true);
    expect(isSchemaDrift(gateway('PARSE_ERROR', pg('42703')))).toBe(true);
    expect(isSchemaDrift(gateway('RPC_SIGNATURE_MISMATCH', pg('42883')))).toBe(true);
    expect(isSchemaDrift(gateway('PARSE_ERROR', pg('42883')))).toBe(false); // an operator the column type lacks
    expect(isSchemaDrift(gateway('NOT_FOUND', pg('42883', { where: 'SQL function f' })))).toBe(false);
    expect(isSchemaDrift(pg('42P01'))).toBe(false);
  });

  it('connection-level SQLSTATEs', () => {
    expect(['08006', '57P01', '57P03'].every(isConnectionLostSqlstate)).toBe(true);
    expect(['28P01', '57014', '53300'].some(isConnectionLostSqlstate)).toBe(false);
    expect(['08001', '28P01', '3D000', '53300', '57P02'].every(isLoginRefusal)).toBe(true);
    expect(['42501', '57014'].some(isLoginRefusal)).toBe(false);
  });
});
