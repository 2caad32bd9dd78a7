import type { ClaimRoom } from './fair-share.js';

/** The most due rows one claim ranks, whatever the backlog. */
const MOST_RANKED = 1024;

/**
 * The ids of up to `limit` due deliveries that `room` lets this instance start
 * (SQL for an `IN (…)`, and its parameters; `:now` is the caller's), the same
 * on both databases: due rows of subscriptions and owners below their cap,
 * the oldest due first (a bounded number of them), then, by window ranks, at
 * most the subscription's room of each subscription's rows and the owner's
 * room of what is left of each owner's. One statement whatever the number of
 * subscriptions. The counts in flight are this instance's (the dispatcher's):
 * each instance has caps of its own. Rows of a subscription or owner at its
 * cap are filtered out before the ranking, so a hanging receiver's backlog
 * takes no ranked place (the index scan still reads past it).
 */
export function fairDue(
  room: ClaimRoom,
  limit: number,
): { sql: string; parameters: Record<string, unknown> } {
  const parameters: Record<string, unknown> = {
    ranked: Math.min(limit * room.perSubscription, MOST_RANKED),
    limit,
  };
  const exclusions: string[] = [];
  /** SQL for `cap` minus what is in flight for `column`'s value; the values at their cap left out. */
  const roomOf = (
    column: string,
    inFlight: ReadonlyMap<string, number>,
    cap: number,
    key: string,
  ) => {
    const full = [...inFlight].filter(([, count]) => count >= cap).map(([name]) => name);
    if (full.length > 0) {
      parameters[`${key}Full`] = full;
      exclusions.push(`AND ${column} NOT IN (:...${key}Full)`);
    }
    const partly = [...inFlight].filter(([, count]) => count < cap);
    const cases = partly.map(([name, count], index) => {
      parameters[`${key}${index}`] = name;
      parameters[`${key}${index}n`] = count;
      return `WHEN :${key}${index} THEN CAST(:${key}${index}n AS integer)`;
    });
    const busy = cases.length > 0 ? `CASE ${column} ${cases.join(' ')} ELSE 0 END` : '0';
    parameters[`${key}Cap`] = cap;
    return `CAST(:${key}Cap AS integer) - ${busy}`;
  };
  const subscriptionRoom = roomOf(
    'd.subscription_id',
    room.subscriptions,
    room.perSubscription,
    'subscription',
  );
  const ownerRoom = roomOf('s.owner', room.owners, room.perOwner, 'owner');
  const sql = `SELECT byOwner.id FROM (
      SELECT bySubscription.id, bySubscription.owner_room,
        ROW_NUMBER() OVER (PARTITION BY bySubscription.owner ORDER BY bySubscription.next_attempt_at, bySubscription.id) AS owner_rank
      FROM (
        SELECT candidate.*,
          ROW_NUMBER() OVER (PARTITION BY candidate.subscription_id ORDER BY candidate.next_attempt_at, candidate.id) AS subscription_rank
        FROM (
          SELECT d.id, d.subscription_id, s.owner, d.next_attempt_at,
            ${subscriptionRoom} AS subscription_room, ${ownerRoom} AS owner_room
          FROM webhook_deliveries d INNER JOIN webhook_subscriptions s ON s.id = d.subscription_id
          WHERE d.state = 'pending' AND d.next_attempt_at <= :now
            AND (d.lease_until IS NULL OR d.lease_until < :now) ${exclusions.join(' ')}
          ORDER BY d.next_attempt_at, d.id
          LIMIT :ranked
        ) candidate
      ) bySubscription
      WHERE bySubscription.subscription_rank <= bySubscription.subscription_room
    ) byOwner
    WHERE byOwner.owner_rank <= byOwner.owner_room
    ORDER BY byOwner.owner_rank
    LIMIT :limit`;
  return { sql, parameters };
}
