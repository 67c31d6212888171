/**
 * The tenant isolation matrix (isolation-matrix.test.ts) through the batch door: every request a
 * batch operation can carry (all but those with headers other than Prefer, and bodies that are not
 * JSON) is sent as the one operation of `POST /_batch`, so a batch can see and change exactly what
 * the same token's single requests can (docs/writing.md, "Batches").
 */
process.env.TABLEGATE_MATRIX_VIA_BATCH = '1';
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./isolation-matrix.test');

describe('the matrix through the batch door', () => {
  it('sent most of its requests as batches', () => {
    expect((globalThis as { __tablegateMatrixBatches?: number }).__tablegateMatrixBatches ?? 0).toBeGreaterThan(2000);
  });
});
