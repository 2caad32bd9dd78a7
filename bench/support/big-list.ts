import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { memoryOf, type Server } from './processes.js';

export interface BigListResult {
  rows: number;
  firstByteMs: number;
  totalMs: number;
  bytes: number;
  /** Peak RSS of the service during the request, less its RSS just before. */
  rssGrowthBytes: number;
  rssMethod: string;
  count: number;
  valid: boolean;
}

/**
 * GET /plants with no limit over `rows` plants (ids 1..rows, named "plant <id>"):
 * time to the first byte of the body, the service's peak RSS growth, and
 * whether the body is one JSON array of every plant in id order.
 */
export async function measureBigList(
  service: Server,
  token: string,
  rows: number,
): Promise<BigListResult> {
  const pid = service.child.pid!;
  global.gc?.();
  await new Promise((r) => setTimeout(r, 500));
  const before = memoryOf(pid, 'VmRSS');
  // Writing 5 to clear_refs resets the kernel's peak-RSS mark (VmHWM) to the current RSS.
  let rssMethod = 'VmHWM reset by clear_refs';
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    rssMethod = 'VmRSS sampled every 5 ms';
  }
  let sampled = before;
  const sampler = setInterval(() => {
    sampled = Math.max(sampled, memoryOf(pid, 'VmRSS'));
  }, 5);
  const started = performance.now();
  let firstByteMs = -1;
  const chunks: Buffer[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const req = request(
        `${service.url}/plants`,
        { headers: { authorization: `Bearer ${token}` } },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`big list answered ${res.statusCode}`));
          res.on('data', (chunk: Buffer) => {
            if (firstByteMs < 0) firstByteMs = performance.now() - started;
            chunks.push(chunk);
          });
          res.on('end', resolve);
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
  } finally {
    clearInterval(sampler);
  }
  const totalMs = performance.now() - started;
  const peak = Math.max(sampled, rssMethod.startsWith('VmHWM') ? memoryOf(pid, 'VmHWM') : 0);
  const body = Buffer.concat(chunks).toString('utf8');
  let count = -1;
  let valid = false;
  try {
    const plants = JSON.parse(body) as Array<{ name: string }>;
    count = plants.length;
    valid =
      Array.isArray(plants) &&
      count === rows &&
      plants.every((plant, i) => plant.name === `plant ${i + 1}`);
  } catch {
    valid = false;
  }
  return {
    rows,
    firstByteMs,
    totalMs,
    bytes: Buffer.byteLength(body),
    rssGrowthBytes: peak - before,
    rssMethod,
    count,
    valid,
  };
}
