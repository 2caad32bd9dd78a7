/**
 * Feeds `total` distinct keys to `hit` in batches of `batch` and reports the
 * time per key of the first and the last batch, and the largest size seen
 * after any batch. A structure whose per-key cost grows with what it holds
 * shows a ratio far above 1; a bounded one stays near 1. The ratio, not an
 * absolute time, is what tests assert: it does not depend on the machine.
 */
export function measureFlatCost(
  hit: (key: string) => unknown,
  size: () => number,
  total = 1_000_000,
  batch = 100_000,
): { ratio: number; largestSize: number } {
  const perBatch: number[] = [];
  let largestSize = 0;
  for (let start = 0; start < total; start += batch) {
    const began = process.hrtime.bigint();
    for (let i = start; i < start + batch; i++) hit(`10.${i >>> 16}.${(i >>> 8) & 255}.${i & 255}`);
    perBatch.push(Number(process.hrtime.bigint() - began));
    largestSize = Math.max(largestSize, size());
  }
  return { ratio: perBatch[perBatch.length - 1] / perBatch[0], largestSize };
}
