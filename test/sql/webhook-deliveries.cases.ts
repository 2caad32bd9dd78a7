import { RequestScope } from '../../src/database/request-scope.js';
import { DeliveryAttemptsRepository } from '../../src/webhooks/delivery-attempts.repository.js';
import {
  type ClaimedDelivery,
  DeliveryClaimsRepository,
} from '../../src/webhooks/delivery-claims.repository.js';
import { DeliveryRetentionRepository } from '../../src/webhooks/delivery-retention.repository.js';
import type { ClaimRoom } from '../../src/webhooks/fair-share.js';
import { OwnerDeliveriesRepository } from '../../src/webhooks/owner-deliveries.repository.js';
import { PlantCreatedOutbox } from '../../src/webhooks/plant-created.outbox.js';
import { WebhookSubscriptionsRepository } from '../../src/webhooks/webhook-subscriptions.repository.js';
import { createAsOneStatement, createManyAsOneStatement } from './plants.cases.js';
import type { CaseContext, SqlFeature } from './sql-case.js';
import { subscription } from './webhook-subscriptions.cases.js';

const OWNER = 'sql-deliveries';
const SUBSCRIPTIONS = [
  subscription(OWNER, '00000000-0000-4000-8000-00000000d001', 'https://d1.example/'),
  subscription(OWNER, '00000000-0000-4000-8000-00000000d002', 'https://d2.example/'),
];
const LEASE_OWNER = '00000000-0000-4000-8000-0000000000ff';
const PAGE = 7;
const BATCH = 13;

/** Nothing in flight: no CASE, no NOT IN. */
const IDLE: ClaimRoom = {
  perSubscription: 4,
  perOwner: 8,
  subscriptions: new Map(),
  owners: new Map(),
};
/** Two subscriptions and two owners partly busy, two of each at their cap. */
const BUSY: ClaimRoom = {
  perSubscription: 4,
  perOwner: 8,
  subscriptions: new Map([
    ['busy-1', 1],
    ['busy-2', 2],
    ['full-1', 4],
    ['full-2', 4],
  ]),
  owners: new Map([
    ['busy-1', 1],
    ['busy-2', 2],
    ['full-1', 8],
    ['full-2', 8],
  ]),
};

/** What the claims took, for the cases after them (every list of values has two: the two due rows). */
let claimed: ClaimedDelivery[] = [];

async function claim({ get, capture }: CaseContext, room: ClaimRoom): Promise<void> {
  const now = Date.now() + 1000;
  await capture(async () => {
    claimed = await get(DeliveryClaimsRepository).claim(LEASE_OWNER, now, now + 60_000, 10, room);
  });
  if (claimed.length !== 2)
    throw new Error(`two due deliveries expected, ${claimed.length} claimed`);
}

/** Sends the first claimed delivery again, which must come out as `expected`. */
async function redeliver({ get, capture }: CaseContext, expected: string): Promise<void> {
  let outcome = '';
  await capture(async () => {
    const { subscriptionId, id } = claimed[0];
    outcome = await get(OwnerDeliveriesRepository).redeliver(
      subscriptionId,
      id,
      Date.now(),
      RequestScope.background,
    );
  });
  if (outcome !== expected) throw new Error(`redeliver: ${outcome}, ${expected} expected`);
}

export const webhookDeliveriesSql: SqlFeature = {
  title: 'the webhook deliveries: outbox, claims, attempts, retention, owner views (src/webhooks)',
  path: 'src/webhooks/sql/webhook-deliveries',
  cases: [
    {
      title:
        'PlantCreatedOutbox.record → WebhookOutboxRepository.enqueueForOwner: a pending delivery per ' +
        'active subscription of the owner, in the create’s transaction (the create on SQLite)',
      run: async ({ get, manager, capture }) => {
        for (const one of SUBSCRIPTIONS) {
          await get(WebhookSubscriptionsRepository).insertBounded(one, 20, RequestScope.background);
        }
        const plant = { id: 1n, name: 'Fern', tag: null };
        await capture(() => get(PlantCreatedOutbox).record(manager, OWNER, plant, null));
      },
    },
    {
      title:
        'PlantCreatedOutbox.statementPart → WebhookOutboxRepository.enqueueForCreatedSql: the ' +
        'deliveries as the command that follows the one-statement create’s CTE (PostgreSQL only)',
      run: async (context) => {
        await createAsOneStatement(context, 'sql-deliveries-none', 2n);
      },
    },
    {
      title:
        'PlantCreatedOutbox.statementPart’s many → WebhookOutboxRepository.enqueueForManyCreatedSql: ' +
        'the deliveries of creates written together, each plant’s payload from its row (PostgreSQL only)',
      run: async (context) => {
        await createManyAsOneStatement(context, 'sql-deliveries-none', [3n, 4n]);
      },
    },
    {
      title: 'DeliveryClaimsRepository.pendingCount: the pending deliveries (a metrics gauge)',
      run: ({ get, capture }) => capture(() => get(DeliveryClaimsRepository).pendingCount()),
    },
    {
      title:
        'DeliveryClaimsRepository.claim: due deliveries leased, nothing in flight (PostgreSQL: one ' +
        'UPDATE of rows locked FOR UPDATE SKIP LOCKED; SQLite: read, then lease, in an unsynced transaction)',
      run: (context) => claim(context, IDLE),
    },
    {
      title:
        'DeliveryClaimsRepository.releaseClaim: a claimed delivery given back unattempted (shutdown)',
      run: async ({ get, capture }) => {
        const claims = get(DeliveryClaimsRepository);
        await capture(() => claims.releaseClaim(claimed[0].id, LEASE_OWNER));
        await claims.releaseClaim(claimed[1].id, LEASE_OWNER);
      },
    },
    {
      title:
        'DeliveryClaimsRepository.claim: with deliveries in flight (fairDue: two subscriptions and two ' +
        'owners partly busy, two of each at their cap)',
      run: (context) => claim(context, BUSY),
    },
    {
      title:
        'DeliveryAttemptsRepository.recordAttempt: an attempt’s outcome, while this instance holds the ' +
        'lease (SQLite: grouped, in an unsynced transaction)',
      run: ({ get, capture }) =>
        capture(() =>
          get(DeliveryAttemptsRepository).recordAttempt(claimed[0].id, LEASE_OWNER, 1, {
            state: 'delivered',
            lastStatus: 200,
            lastError: null,
            nextAttemptAt: null,
          }),
        ),
    },
    {
      title:
        'DeliveryAttemptsRepository.dropPending: a disabled subscription’s pending deliveries failed, ' +
        'on the caller’s manager',
      run: ({ get, manager, capture }) =>
        capture(() =>
          get(DeliveryAttemptsRepository).dropPending(
            manager,
            SUBSCRIPTIONS[1].id,
            'msg_none',
            'subscription disabled',
          ),
        ),
    },
    {
      title:
        'OwnerDeliveriesRepository.latestOf: a subscription’s latest deliveries, the first page',
      inlined: { limit: PAGE },
      run: ({ get, capture }) =>
        capture(() =>
          get(OwnerDeliveriesRepository).latestOf(
            SUBSCRIPTIONS[0].id,
            PAGE,
            undefined,
            RequestScope.background,
          ),
        ),
    },
    {
      title: 'OwnerDeliveriesRepository.latestOf: the page before a position (keyset paging)',
      inlined: { limit: PAGE },
      run: ({ get, capture }) =>
        capture(() =>
          get(OwnerDeliveriesRepository).latestOf(
            SUBSCRIPTIONS[0].id,
            PAGE,
            {
              createdAt: Date.now(),
              id: 'msg_ffffffffffffffffffffffffffffffff',
            },
            RequestScope.background,
          ),
        ),
    },
    {
      title: 'OwnerDeliveriesRepository.redeliver: a finished delivery made pending again',
      run: (context) => redeliver(context, 'redelivered'),
    },
    {
      title:
        'OwnerDeliveriesRepository.redeliver: one that is pending already (or unknown): the UPDATE ' +
        'changes nothing, then whether it exists',
      run: (context) => redeliver(context, 'pending'),
    },
    {
      title:
        'OwnerDeliveriesRepository.recover: a subscription’s failed deliveries since a time made pending',
      run: ({ get, capture }) =>
        capture(() =>
          get(OwnerDeliveriesRepository).recover(
            SUBSCRIPTIONS[1].id,
            0,
            Date.now(),
            RequestScope.background,
          ),
        ),
    },
    {
      title:
        'DeliveryRetentionRepository.deleteFinishedBefore: a batch of finished deliveries deleted ' +
        '(WebhookRetention); the batch size is written into the SQL',
      inlined: { batch: BATCH },
      run: ({ get, capture }) =>
        capture(() =>
          get(DeliveryRetentionRepository).deleteFinishedBefore(Date.now() + 1000, BATCH),
        ),
    },
  ],
};
