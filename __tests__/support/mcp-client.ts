/**
 * A real MCP client (the official SDK's `Client` over its Streamable HTTP transport) against a
 * gateway app listening on a real port, for the agents' door tests (docs/mcp.md).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type express from 'express';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface Listening {
  readonly url: string;
  close(): Promise<void>;
}

export async function listen(app: express.Express): Promise<Listening> {
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    // Keep-alive connections of the clients would hold close() open.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A connected client sending `headers` (usually `Authorization: Bearer <token>`) with every request. */
export async function connect(endpoint: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'tablegate-test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers } }));
  return client;
}

export const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });

export type ToolAnswer =
  | { readonly ok: true; readonly data: Record<string, unknown>; readonly text: string }
  | { readonly ok: false; readonly code: string; readonly message: string; readonly text: string };

/** Calls a tool; a tool error becomes `{ ok: false, code }` (the catalogue's code in the error's text). */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text?: string }[];
  const text = content.map((c) => c.text ?? '').join('\n');
  if (result.isError === true) {
    const error = (JSON.parse(content[0]?.text ?? '{}') as { error: { code: string; message: string } }).error;
    return { ok: false, code: error.code, message: error.message, text };
  }
  // The JSON text copy is the structured content, exactly.
  expect(JSON.parse(content[0]!.text!)).toEqual(result.structuredContent);
  return { ok: true, data: result.structuredContent as Record<string, unknown>, text };
}

/** The data of a call that must succeed. */
export async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const answer = await callTool(client, name, args);
  if (!answer.ok) throw new Error(`${name} failed: ${answer.code} ${answer.message}`);
  return answer.data;
}

/** The code of a call that must fail. */
export async function failure(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const answer = await callTool(client, name, args);
  if (answer.ok) throw new Error(`${name} succeeded: ${JSON.stringify(answer.data).slice(0, 300)}`);
  // Never SQL text or a stack (docs/errors.md).
  expect(answer.text).not.toMatch(/\bSELECT\b|\bFROM\b.*\bWHERE\b|\n\s+at /);
  return answer.code;
}
