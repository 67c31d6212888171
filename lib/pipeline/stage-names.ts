/**
 * The names of the six stages, in the order they run. `options.stages` is checked against this
 * list once, by resolveConfig (lib/config/resolve-config.ts).
 */
export const stageNames = ['auth', 'parse', 'policy', 'allowList', 'compile', 'execute'] as const;

export type StageName = (typeof stageNames)[number];
