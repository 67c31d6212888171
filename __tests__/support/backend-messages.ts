/**
 * PostgreSQL backend messages as bytes, for unit tests of the code that reads them without pg's
 * parser (lib/db/raw-row-query.ts, lib/db/export-row-encoder.ts). Format: PostgreSQL docs,
 * "Message Formats".
 */

/** A DataRow's payload: int16 field count, then per field an int32 length (-1 for NULL) and its bytes. */
export function dataRowPayload(...fields: (string | null)[]): Buffer {
  const parts: Buffer[] = [Buffer.alloc(2)];
  parts[0]!.writeInt16BE(fields.length);
  for (const f of fields) {
    const len = Buffer.alloc(4);
    len.writeInt32BE(f === null ? -1 : Buffer.byteLength(f));
    parts.push(len, ...(f === null ? [] : [Buffer.from(f)]));
  }
  return Buffer.concat(parts);
}

/** One backend message: type byte, int32 length (itself included), payload. */
export function backendMessage(type: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(payload.length + 4, 1);
  return Buffer.concat([head, payload]);
}
