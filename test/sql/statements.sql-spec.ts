import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/test-app.js';
import { databaseKinds } from '../support/test-database.js';
import { normalised, snapshotText, StatementCapture, type CapturedEntry } from './capture.js';
import { healthSql } from './health.cases.js';
import { plantsSql } from './plants.cases.js';
import { queryClasses, recordCalls, type QueryClass } from './query-methods.js';
import type { SqlFeature } from './sql-case.js';
import { startUpSql } from './start-up.cases.js';
import { tokensSql } from './tokens.cases.js';
import { webhookDeliveriesSql } from './webhook-deliveries.cases.js';
import { webhookSubscriptionsSql } from './webhook-subscriptions.cases.js';

/**
 * The SQL snapshots (`src/<feature>/sql/<name>.<database>.sql`): every
 * statement shape the service runs, captured from the real repositories on a
 * real database. `npm run sql:snapshots` writes them, `npm run sql:check`
 * (CI) fails on any difference. The features run in this order, on one
 * database per kind, each case after the one before it.
 */
const FEATURES: SqlFeature[] = [
  plantsSql,
  tokensSql,
  webhookSubscriptionsSql,
  webhookDeliveriesSql,
  healthSql,
  startUpSql,
];

const ROOT = resolve(import.meta.dirname, '../..');
const KINDS = ['sqlite', 'postgres'] as const;

describe.each(databaseKinds())('the SQL the service runs on %s', (kind) => {
  // No dispatcher or retention: nothing runs SQL but the cases.
  const t = useTestApp(kind, { APP_ROLE: 'api' });
  let capture: StatementCapture;
  let classes: QueryClass[];
  const called = new Set<string>();

  beforeAll(async () => {
    const { app } = t.current;
    capture = new StatementCapture(app.get(DataSource));
    classes = await queryClasses(ROOT);
    for (const { type, methods } of classes) {
      recordCalls(app.get(type, { strict: false }), methods, () => capture.capturing, called);
    }
  });

  for (const feature of FEATURES.filter(({ only }) => !only || only === kind)) {
    it(`${feature.path}.${kind}.sql`, async () => {
      const { app } = t.current;
      const entries: CapturedEntry[] = [];
      for (const { title, inlined, only, run } of feature.cases) {
        const statements: string[] = [];
        await run({
          kind,
          app,
          get: (type) => app.get(type, { strict: false }),
          manager: app.get(DataSource).manager,
          capture: async (work) => {
            statements.push(...(await capture.during(work)));
          },
        });
        if (only && only !== kind) continue;
        entries.push({ title, statements: statements.map((sql) => normalised(sql, inlined)) });
      }
      await expect(snapshotText(feature.title, kind, entries)).toMatchFileSnapshot(
        join(ROOT, `${feature.path}.${kind}.sql`),
      );
    });
  }

  // After the features: a public method no case called may run SQL no snapshot shows.
  it('every public method of a repository and of the outbox ran in a case', () => {
    expect(classes.map(({ file }) => file)).toContain('src/webhooks/plant-created.outbox.ts');
    const missed = classes.flatMap(({ methods }) => methods).filter((name) => !called.has(name));
    expect(missed).toEqual([]);
  });
});

// A snapshot no feature writes any more would go stale unseen (a missing one fails its test above).
describe('the SQL snapshot files', () => {
  it('are only the ones the features write, a file per feature and database', () => {
    const expected = FEATURES.flatMap(({ path, only }) =>
      KINDS.filter((kind) => !only || only === kind).map((kind) => `${path}.${kind}.sql`),
    );
    const stale = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((path) => path.endsWith('.sql'))
      .map((path) => `src/${path}`)
      .filter((path) => !expected.includes(path));
    expect(stale).toEqual([]);
  });
});
