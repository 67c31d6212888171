export const SETUP_SYSTEM: string;
export const SETUP_KERBEROS: string;
export function recordSkip(what: string, reason: string, enable: string): void;
export function describeIfPresent(what: string, missing: readonly string[], enable: string): jest.Describe;
export function isProgram(file: string): boolean;
export function readSkips(log: string): { what: string; reason: string; enable: string }[];
