/** Where a delivery goes, as fairness counts it. */
export interface DeliveryTarget {
  subscriptionId: string;
  owner: string;
}

/**
 * What a claim may still take, in this instance: at most `perSubscription`
 * deliveries in flight to one subscription and `perOwner` to one owner's
 * subscriptions together; `subscriptions` and `owners` say how many are in
 * flight now (only those with at least one).
 */
export interface ClaimRoom {
  perSubscription: number;
  perOwner: number;
  subscriptions: ReadonlyMap<string, number>;
  owners: ReadonlyMap<string, number>;
}

/**
 * Counts one instance's deliveries in flight by subscription and by owner, so
 * that the dispatcher claims only what it may start: a receiver that hangs
 * holds at most `perSubscription` of the instance's slots, and one owner's
 * receivers together at most half of them (at least 1), so that other owners'
 * deliveries keep flowing.
 */
export class FairShare {
  readonly perOwner: number;
  readonly perSubscription: number;
  private readonly subscriptions = new Map<string, number>();
  private readonly owners = new Map<string, number>();

  constructor(concurrency: number, perSubscription: number) {
    this.perOwner = Math.max(1, Math.floor(concurrency / 2));
    // A subscription never gets more than its owner may hold.
    this.perSubscription = Math.min(perSubscription, this.perOwner);
  }

  started(target: DeliveryTarget): void {
    bump(this.subscriptions, target.subscriptionId, 1);
    bump(this.owners, target.owner, 1);
  }

  /**
   * Counts a delivery out; true when that brought its subscription or owner
   * back under the cap, i.e. deliveries held back may now be claimed.
   */
  finished(target: DeliveryTarget): boolean {
    const subscription = bump(this.subscriptions, target.subscriptionId, -1);
    const owner = bump(this.owners, target.owner, -1);
    return subscription === this.perSubscription - 1 || owner === this.perOwner - 1;
  }

  /**
   * Whether `claimed`, taken with `room`, filled a subscription or owner to
   * its cap: the claim may have left rows out for it, which the next claim
   * (without it) may reach. As the room stood when asked, not as it stands
   * now: a delivery that finished meanwhile must not hide the cut.
   */
  filled(room: ClaimRoom, claimed: readonly DeliveryTarget[]): boolean {
    const subscriptions = new Map(room.subscriptions);
    const owners = new Map(room.owners);
    return claimed.some(
      (target) =>
        bump(subscriptions, target.subscriptionId, 1) >= room.perSubscription ||
        bump(owners, target.owner, 1) >= room.perOwner,
    );
  }

  /** A snapshot of what is in flight, for one claim. */
  room(): ClaimRoom {
    return {
      perSubscription: this.perSubscription,
      perOwner: this.perOwner,
      subscriptions: new Map(this.subscriptions),
      owners: new Map(this.owners),
    };
  }
}

/** Adds `by` to the count of `key` (dropping it at 0); returns the new count. */
function bump(counts: Map<string, number>, key: string, by: number): number {
  const count = (counts.get(key) ?? 0) + by;
  if (count > 0) counts.set(key, count);
  else counts.delete(key);
  return count;
}
