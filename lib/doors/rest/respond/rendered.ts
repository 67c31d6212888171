/** What rendering produces for one request: the HTTP status and the JSON body text. */
export interface Rendered {
  readonly status: number;
  /** JSON text, or null for a response without a body (204). */
  readonly body: string | null;
}
