/** The environment bench/run.ts starts the peer with, read once, with the service's defaults. */
export const settings = {
  databaseUrl: process.env.DATABASE_URL ?? 'sqlite:./data/conventional.sqlite',
  poolSize: Number(process.env.DB_POOL_SIZE ?? 10),
  logLevel: process.env.LOG_LEVEL ?? 'info',
  rateLimitMax: Number(process.env.RATE_LIMIT_MAX ?? 1200),
  rateLimitWindowMs: Number(process.env.RATE_LIMIT_WINDOW_MS ?? 60_000),
  host: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 3003),
};
