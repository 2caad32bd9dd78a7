import { DataSource } from 'typeorm';
import type { SqlFeature } from './sql-case.js';

export const startUpSql: SqlFeature = {
  title: 'start-up (src/database), outside any feature',
  path: 'src/database/sql/start-up',
  // On SQLite TypeORM runs nothing at start-up through its logger (its pragmas go to the driver).
  only: 'postgres',
  cases: [
    {
      title:
        'DataSource.initialize: what TypeORM reads of the server once per process (the service, ' +
        'the token CLI, the migrations job); migrations run after it and are not here',
      run: async ({ app, capture }) => {
        // A second DataSource with the app's own options and logger, so that the capture sees it.
        const running = app.get(DataSource);
        const fresh = new DataSource({ ...running.options, logger: running.logger });
        await capture(() => fresh.initialize());
        await fresh.destroy();
      },
    },
  ],
};
