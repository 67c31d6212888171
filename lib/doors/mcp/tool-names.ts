/**
 * The agents' door's tools (docs/mcp.md, "Tools"): the read tools every caller may be offered and
 * the write tools `mcp.writes = true` adds. Their names are metric labels too, so the set is fixed.
 */
export const readTools = ['list_tables', 'describe_table', 'query_rows', 'get_row', 'aggregate', 'call_function'] as const;
export const writeTools = ['insert_rows', 'update_row', 'delete_row'] as const;
export type ToolName = (typeof readTools)[number] | (typeof writeTools)[number];
export const toolNames: readonly ToolName[] = [...readTools, ...writeTools];

export function isToolName(name: string): name is ToolName {
  return (toolNames as readonly string[]).includes(name);
}
