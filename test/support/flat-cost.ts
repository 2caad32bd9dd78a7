/**
 * Feeds `total` distinct keys to `hit` in batches of `batch` and compares the
 * time per key of the last batch with the first, and reports the largest size
 * seen after any batch. A structure whose per-key cost grows with what it
 * holds shows a ratio far above 1; a bounded one stays near 1. Each batch is
 * timed in ten slices and the fastest slice counts: a garbage collection or a
 * neighbour's burst on a shared machine slows some slices, never all of them.
 * The ratio, not an absolute time, is what tests assert.
 */
export function measureFlatCost(
  hit: (key: string) => unknown,
  size: () => number,
  total = 1_000_000,
  batch = 100_000,
): { ratio: number; largestSize: number } {
  const slice = batch / 10;
  const fastestSlice: number[] = [];
  let largestSize = 0;
  for (let start = 0; start < total; start += batch) {
    let fastest = Infinity;
    for (let from = start; from < start + batch; from += slice) {
      const began = process.hrtime.bigint();
      for (let i = from; i < from + slice; i++) {
        hit(`10.${i >>> 16}.${(i >>> 8) & 255}.${i & 255}`);
      }
      fastest = Math.min(fastest, Number(process.hrtime.bigint() - began));
    }
    fastestSlice.push(fastest);
    largestSize = Math.max(largestSize, size());
  }
  return { ratio: fastestSlice[fastestSlice.length - 1] / fastestSlice[0], largestSize };
}
