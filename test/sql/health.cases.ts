import type { SqlFeature } from './sql-case.js';

export const healthSql: SqlFeature = {
  title: 'the readiness probe (src/health)',
  path: 'src/health/sql/health',
  cases: [
    {
      title:
        'HealthController.ready: the database ping (Terminus’ TypeOrmHealthIndicator.pingCheck)',
      run: ({ app, capture }) =>
        capture(async () => {
          const response = await app.inject({ method: 'GET', url: '/health/ready' });
          if (response.statusCode !== 200) throw new Error(`ready: ${response.statusCode}`);
        }),
    },
  ],
};
