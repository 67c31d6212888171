/** ajv errors -> "tables.orders: must have required property 'operations'; ..." for a GatewayConfigError. */
import type { ErrorObject } from 'ajv';

export function describeSchemaErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 5)
    .map((e) => {
      const where = e.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(top level)';
      const extra = e.keyword === 'additionalProperties' ? ` \`${(e.params as { additionalProperty: string }).additionalProperty}\`` : '';
      return `${where}: ${e.message ?? 'invalid'}${extra}`;
    })
    .join('; ');
}
