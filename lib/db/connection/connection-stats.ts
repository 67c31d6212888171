/** GSS counters for /metrics: retries, failed GSS connections, circuit openings, circuit state. */
export interface ConnectionStats {
  readonly gssRetries: number;
  readonly gssFailures: number;
  readonly gssCircuitOpenings: number;
  readonly gssCircuitOpen: boolean;
}
