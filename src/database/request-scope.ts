import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What a request's database work carries without every repository passing it
 * along: the moment by which it must be done (waiting for a connection, every
 * statement, a retry, the token lookup included), and on whose behalf it runs
 * (its party), so that the PostgreSQL pool can share its connections fairly
 * (failover-pool.ts, fair-pool-gate.ts). Work outside a request (the webhook
 * dispatcher, start-up) has neither: each of its statements gets
 * DB_STATEMENT_TIMEOUT_MS, and it shares the pool as the party `background`.
 */
export interface RequestScope {
  /** A Date.now() value; undefined for a streamed list's later pages. */
  expiresAt?: number;
  /** `owner:<owner>` once authenticated; `address:<client address>` while its token is looked up. */
  party?: string;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/**
 * Whether requests keep a scope on this database. PostgreSQL's work waits
 * for a pooled connection and on the network, which the deadline bounds and
 * the pool shares (failover-pool.ts). SQLite's runs in the process and waits
 * only for the write lock, which its busy timeout bounds: nothing there reads
 * the scope, so none is kept, and no AsyncLocalStorage is entered. Entering
 * one makes Node 20 hook every promise of the process from then on, some 140
 * of them per list request: about a quarter of a SQLite list's CPU time.
 */
export function keepsDeadlines(kind: 'sqlite' | 'postgres'): boolean {
  return kind === 'postgres';
}

/** The party of an authenticated owner's work. */
export const ownerParty = (owner: string): string => `owner:${owner}`;

/**
 * The scope of a request that arrived `elapsedMs` ago: due `budgetMs`
 * (DB_REQUEST_DEADLINE_MS) after its arrival; its client address's work,
 * when given, until its owner is known (ownerScope); a public route's,
 * given none, is `background`.
 */
export function arrivalScope(budgetMs: number, elapsedMs: number, address?: string): RequestScope {
  const expiresAt = Date.now() - elapsedMs + budgetMs;
  return address === undefined ? { expiresAt } : { expiresAt, party: `address:${address}` };
}

/** The same request's scope once its token named `owner`: the same deadline, the owner's work. */
export function ownerScope(scope: RequestScope, owner: string): RequestScope {
  return { expiresAt: scope.expiresAt, party: ownerParty(owner) };
}

/** Runs `work`, and the database work it starts, in `scope`. */
export function within<T>(scope: RequestScope, work: () => T): T {
  return scopes.run(scope, work);
}

/** Runs `work` with database work due by `expiresAt` (a Date.now() value), on behalf of `party`. */
export function withDeadline<T>(expiresAt: number, work: () => T, party?: string): T {
  return within({ expiresAt, party }, work);
}

/** Milliseconds left for database work in this request, or undefined outside one. */
export function remainingMs(): number | undefined {
  const expiresAt = scopes.getStore()?.expiresAt;
  return expiresAt === undefined ? undefined : expiresAt - Date.now();
}

/** On whose behalf this database work runs: a request's party, or `background`. */
export function currentParty(): string {
  return scopes.getStore()?.party ?? 'background';
}

/**
 * A runner, taken while the request runs, for database work done later on
 * its behalf but without its deadline: the pages of a streamed list, read
 * while the answer is written at its client's pace (each statement with
 * DB_STATEMENT_TIMEOUT_MS of its own). That work runs when the socket asks
 * for more, outside the request's async context, so the party is taken now.
 */
export function laterOnBehalfOfThisRequest(): <T>(work: () => T) => T {
  const scope = scopes.getStore();
  // Without a scope (SQLite), none is entered (see keepsDeadlines).
  if (scope === undefined) return (work) => work();
  const later: RequestScope = { party: scope.party };
  return (work) => scopes.run(later, work);
}
