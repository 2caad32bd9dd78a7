const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Reads WEBHOOK_RETRY_SCHEDULE (already checked by the environment's
 * pattern), e.g. `5s,30s,2m` -> [5000, 30000, 120000]: the wait before the
 * 2nd, 3rd and 4th attempt. After the last one a delivery is marked failed.
 */
export function parseRetrySchedule(text: string): number[] {
  return text.split(',').map(parseDuration);
}

/** One duration of that syntax (already checked), e.g. `24h` -> 86400000. */
export function parseDuration(text: string): number {
  const [, amount, unit] = /^\s*(\d+)(ms|s|m|h|d)\s*$/.exec(text)!;
  return Number(amount) * UNIT_MS[unit];
}

/** Largest share of a wait that jitter adds or takes away. */
const JITTER = 0.2;

/**
 * A scheduled wait with ±20 % jitter, so that deliveries that failed together
 * (a receiver that was down) do not all come back at the same instant.
 */
export function withJitter(waitMs: number, random: () => number = Math.random): number {
  return Math.round(waitMs * (1 - JITTER + 2 * JITTER * random()));
}

/**
 * A `Retry-After` value as milliseconds from `now`: delta seconds or an HTTP
 * date (a date in the past is 0). Anything else is undefined and ignored, so
 * a receiver's garbage never changes the schedule.
 */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // HTTP dates name a weekday and a month (IMF-fixdate, RFC 850, asctime):
  // a bare number or ISO string is not one.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The wait before the next attempt: the schedule's (jittered) wait, or the
 * receiver's `Retry-After` when that is later, never beyond `longestMs` (the
 * schedule's longest wait), so a receiver cannot park a delivery for ever.
 */
export function nextWait(scheduledMs: number, retryAfter: number | undefined, longestMs: number) {
  if (retryAfter === undefined || retryAfter <= scheduledMs) return scheduledMs;
  return Math.max(scheduledMs, Math.min(retryAfter, longestMs));
}
