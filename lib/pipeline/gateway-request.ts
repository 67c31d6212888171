/**
 * The framework-free view of one HTTP request (grafserv's "request digest"). Made once from
 * Express's `req` by `digestRequest`; stages never see `req` or `res`.
 */
export interface GatewayRequest {
  readonly id: string;
  readonly method: string;
  /**
   * Path segments below the mount point, percent-decoded one by one. For `:id` segments the
   * raw text is kept in `rawSegments` so that `%2C` stays distinguishable from a key-separating comma.
   */
  readonly segments: readonly string[];
  readonly rawSegments: readonly string[];
  /** Query parameters in order, repeated keys kept (`+` decodes to a space). */
  readonly query: readonly (readonly [string, string])[];
  /** Lower-cased header names; repeated headers joined by ', ' as Node does. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /**
   * The body of a POST or PATCH exactly as received (UTF-8 text), or undefined when there is
   * none. Writes bind this text as one json parameter, so numbers reach PostgreSQL unrounded.
   */
  readonly body: string | undefined;
  /**
   * An `application/octet-stream` body as received (then `body` is undefined: such a body is not
   * text): the argument of a function call taking one unnamed bytea argument; routes that read
   * JSON refuse the media type (415).
   */
  readonly bodyBytes?: Uint8Array;
  /** True when the TCP peer is a loopback address (127.0.0.0/8, ::1). */
  readonly loopback: boolean;
}
