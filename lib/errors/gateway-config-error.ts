/**
 * Thrown by `createGateway` (and at `ready`) for invalid options or files. The message names
 * the key and the fix; it never echoes a secret value.
 */
export class GatewayConfigError extends Error {
  readonly key: string | undefined;

  constructor(message: string, key?: string) {
    super(message);
    this.name = 'GatewayConfigError';
    this.key = key;
  }
}
