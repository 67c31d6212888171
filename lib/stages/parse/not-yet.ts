import { GatewayError } from '../../errors/gateway-error';

/** Routes of the spec whose issue has not landed yet answer this, never a half-built response. */
export function notYet(route: string): never {
  throw new GatewayError('NOT_FOUND', `${route} is not available in this version of tablegate.`);
}
