/**
 * Feeds `total` distinct keys to `hit` in batches of `batch` and reports the
 * largest size seen after any batch and two ratios of the cost per key:
 * - `growth`, the last batch against the first. The first fills the structure
 *   and the later ones also evict, which costs a few times more; a structure
 *   that sweeps all it holds for each new key costs thousands of times more.
 * - `drift`, the last batch against the second, once both evict: a bounded
 *   structure costs the same per key after 200,000 keys as after 1,000,000.
 *
 * Each batch is timed in chunks and its cost is its cheapest chunk: another
 * process taking the CPU, or a garbage collection, slows some chunks and
 * never speeds one up, so the minimum is what the structure itself costs.
 * The ratio, not an absolute time, is what tests assert.
 */
export function measureFlatCost(
  hit: (key: string) => unknown,
  size: () => number,
  total = 1_000_000,
  batch = 100_000,
  chunks = 20,
): { growth: number; drift: number; largestSize: number } {
  const chunk = batch / chunks;
  const perBatch: number[] = [];
  let largestSize = 0;
  for (let start = 0; start < total; start += batch) {
    let cheapest = Infinity;
    for (let from = start; from < start + batch; from += chunk) {
      const began = process.hrtime.bigint();
      for (let i = from; i < from + chunk; i++) {
        hit(`10.${i >>> 16}.${(i >>> 8) & 255}.${i & 255}`);
      }
      cheapest = Math.min(cheapest, Number(process.hrtime.bigint() - began));
    }
    perBatch.push(cheapest);
    largestSize = Math.max(largestSize, size());
  }
  const last = perBatch[perBatch.length - 1];
  return { growth: last / perBatch[0], drift: last / perBatch[1], largestSize };
}
