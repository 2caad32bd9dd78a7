/** Where the bench creates and drops its PostgreSQL databases. */
export const POSTGRES_ADMIN_URL =
  process.env.BENCH_POSTGRES_URL ??
  process.env.TEST_POSTGRES_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

/** KEY=VALUE pairs of a command-line option (e.g. --service-env) as an environment. */
export function parseSettings(pairs: readonly string[], option: string): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new Error(`--${option} takes KEY=VALUE, not ${pair}`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}
