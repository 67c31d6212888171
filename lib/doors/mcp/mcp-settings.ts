/**
 * The agents' door's settings with their defaults applied (docs/mcp.md, docs/configuration.md
 * `mcp`). In: the `mcp` key as configured. Out: every setting, frozen. Never: turns the door on
 * by default.
 */
import type { McpConfig } from '../../pipeline/resolved-config';

export interface McpSettings {
  readonly enabled: boolean;
  readonly writes: boolean;
  readonly maxRows: number;
  readonly authorizationServers: readonly string[];
  /** Undefined: no cap of the agent's own beside `rate_limit`. */
  readonly callsPerMinute: number | undefined;
}

export const defaultMaxRows = 100;

export function mcpSettings(config: McpConfig | undefined): McpSettings {
  return Object.freeze({
    enabled: config?.enabled === true,
    writes: config?.writes === true,
    maxRows: config?.maxRows ?? defaultMaxRows,
    authorizationServers: Object.freeze([...(config?.authorizationServers ?? [])]),
    callsPerMinute: config?.callsPerMinute,
  });
}
