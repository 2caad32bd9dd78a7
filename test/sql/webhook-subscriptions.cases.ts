import { RequestScope } from '../../src/database/request-scope.js';
import {
  type InsertOutcome,
  WebhookSubscriptionsRepository,
} from '../../src/webhooks/webhook-subscriptions.repository.js';
import type { WebhookSubscription } from '../../src/webhooks/webhook-subscription.entity.js';
import type { CaseContext, SqlFeature } from './sql-case.js';

const OWNER = 'sql-subscriptions';
const PAGE = 7;

/** A subscription of `owner` as WebhooksService.create makes it. */
export function subscription(owner: string, id: string, url: string): WebhookSubscription {
  return {
    id,
    owner,
    url,
    description: null,
    secret: `whsec_${'s'.repeat(43)}`,
    createdAt: 1_700_000_000_000,
    disabledAt: null,
  };
}

const FIRST = subscription(OWNER, '00000000-0000-4000-8000-00000000a001', 'https://a.example/');

/** Inserts `one` bounded to 20 per owner, which must come out as `expected`. */
async function insertBounded(
  { get, capture }: CaseContext,
  one: WebhookSubscription,
  expected: InsertOutcome['kind'],
): Promise<void> {
  let outcome: InsertOutcome | undefined;
  await capture(async () => {
    outcome = await get(WebhookSubscriptionsRepository).insertBounded(
      one,
      20,
      RequestScope.background,
    );
  });
  if (outcome?.kind !== expected)
    throw new Error(`insertBounded: ${outcome?.kind}, ${expected} expected`);
}

export const webhookSubscriptionsSql: SqlFeature = {
  title: 'the webhook subscriptions (src/webhooks)',
  path: 'src/webhooks/sql/webhook-subscriptions',
  cases: [
    {
      title:
        'WebhookSubscriptionsRepository.insertBounded: created (PostgreSQL: the owner’s turn by ' +
        'an advisory lock; the owner’s URLs read, then the insert, in one transaction)',
      run: (context) => insertBounded(context, FIRST, 'created'),
    },
    {
      title:
        'WebhookSubscriptionsRepository.insertBounded: refused (the same URL, or the owner at its ' +
        'limit): no insert',
      run: (context) =>
        insertBounded(
          context,
          { ...FIRST, id: '00000000-0000-4000-8000-00000000a002' },
          'duplicate',
        ),
    },
    {
      title: 'WebhookSubscriptionsRepository.list: all of the owner’s subscriptions, oldest first',
      run: ({ get, capture }) =>
        capture(() => get(WebhookSubscriptionsRepository).list(OWNER, {}, RequestScope.background)),
    },
    {
      title:
        'WebhookSubscriptionsRepository.list: the first page; its size is written into the SQL',
      inlined: { take: PAGE },
      run: ({ get, capture }) =>
        capture(() =>
          get(WebhookSubscriptionsRepository).list(OWNER, { take: PAGE }, RequestScope.background),
        ),
    },
    {
      title: 'WebhookSubscriptionsRepository.list: the page after a position (keyset paging)',
      inlined: { take: PAGE },
      run: ({ get, capture }) =>
        capture(() =>
          get(WebhookSubscriptionsRepository).list(
            OWNER,
            {
              take: PAGE,
              after: { createdAt: FIRST.createdAt, id: FIRST.id },
            },
            RequestScope.background,
          ),
        ),
    },
    {
      title: 'WebhookSubscriptionsRepository.findOwned: one of the owner’s subscriptions',
      run: ({ get, capture }) =>
        capture(() =>
          get(WebhookSubscriptionsRepository).findOwned(OWNER, FIRST.id, RequestScope.background),
        ),
    },
    {
      title:
        'WebhookSubscriptionsRepository.target: where and how to send a delivery (per attempt)',
      run: ({ get, capture }) =>
        capture(() => get(WebhookSubscriptionsRepository).target(FIRST.id, Date.now())),
    },
    {
      title:
        'WebhookSubscriptionsRepository.rotateSecret: the current secret read (PostgreSQL: locked), ' +
        'then replaced, in one transaction',
      run: ({ get, capture }) =>
        capture(() =>
          get(WebhookSubscriptionsRepository).rotateSecret(
            OWNER,
            FIRST.id,
            `whsec_${'r'.repeat(43)}`,
            Date.now() + 86_400_000,
            RequestScope.background,
          ),
        ),
    },
    {
      title: 'WebhookSubscriptionsRepository.disable: on the caller’s manager (a receiver’s 410)',
      run: ({ get, manager, capture }) =>
        capture(() => get(WebhookSubscriptionsRepository).disable(manager, FIRST.id, Date.now())),
    },
    {
      title:
        'WebhookSubscriptionsRepository.delete: the owner’s subscription (its deliveries cascade)',
      run: ({ get, capture }) =>
        capture(() =>
          get(WebhookSubscriptionsRepository).delete(OWNER, FIRST.id, RequestScope.background),
        ),
    },
  ],
};
