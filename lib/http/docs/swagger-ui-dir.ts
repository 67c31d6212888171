/**
 * Where the API explorer's Swagger UI files are: the `swagger-ui-dist` package, an optional peer
 * dependency (docs/getting-started.md, "The API explorer"), so that library users who never mount
 * `gateway.docs` never download its ~12 MB nor its dependency @scarf/scarf and its install script.
 * Missing, it is a GatewayConfigError naming the install command, never a page without assets.
 */
import path from 'node:path';
import { GatewayConfigError } from '../../errors/gateway-config-error';

/** `resolve` is Node's resolution from tablegate (replaced in unit tests). */
export function swaggerUiDir(resolve: (request: string) => string = require.resolve): string {
  try {
    return path.dirname(resolve('swagger-ui-dist/package.json'));
  } catch (err) {
    const code = (err as { code?: string } | undefined)?.code;
    if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new GatewayConfigError(
      'gateway.docs (the API explorer) needs the package swagger-ui-dist, an optional peer dependency of tablegate; run `npm install swagger-ui-dist` in your project, or do not mount gateway.docs',
    );
  }
}
