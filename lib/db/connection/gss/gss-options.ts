/**
 * The `gss` option of createGateway: a host-supplied GSSAPI token source for
 * `gss_provider=callback` or `custom` (docs/security.md, "Kerberos / GSSAPI"). Types only.
 */

/** Bytes from or for the server: a Buffer, or any Uint8Array. */
export type GssToken = Uint8Array;

/**
 * `callback`: called once per token the server asks for. `challenge` is undefined for the first
 * token and the server's GSSContinue data after that; `state` is a fresh object per connection
 * for whatever the callback must remember between its calls (e.g. a GSS context). Return the
 * token to send, or undefined / an empty token when there is nothing to send.
 */
export type GssTokenCallback = (target: string, challenge: GssToken | undefined, state: Record<string, unknown>) => Promise<GssToken | undefined | null> | GssToken | undefined | null;

/** One security context, as a GSSAPI library gives it: one step per server challenge. */
export interface GssContext {
  step(challenge: GssToken | undefined): Promise<GssToken | undefined | null>;
  /** True once the context is established (mutual authentication done); checked at AuthenticationOk when present. */
  readonly complete?: boolean;
}

/** `custom`: makes one context per connection. `mechanism` is `sspi` for an SSPI request (SPNEGO). */
export type GssContextFactory = (target: string, mechanism: 'gssapi' | 'sspi') => GssContext | Promise<GssContext>;

export type GssOptions =
  | { readonly provider: 'callback'; readonly token: GssTokenCallback }
  | { readonly provider: 'custom'; readonly createContext: GssContextFactory };
