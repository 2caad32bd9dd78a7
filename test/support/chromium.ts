import { existsSync } from 'node:fs';

/** Debian's chromium package; npm's browser downloads do not work on these machines. */
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * The Chromium to drive, or undefined (with a message saying how to get one)
 * when there is none. In CI (CI=true) a missing Chromium fails the run, as
 * .ci/run installs it: a green CI always means the browser test ran.
 */
export function findChromium(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  const advice =
    'install it (Debian: apt-get install chromium) or point CHROMIUM_PATH at a Chromium binary';
  if (process.env.CI === 'true') {
    throw new Error(`CI=true but Chromium is not at ${CHROMIUM_PATH}: ${advice}`);
  }
  console.warn(
    `Chromium is not at ${CHROMIUM_PATH}: the Swagger UI browser test is skipped. To run it, ${advice}.`,
  );
  return undefined;
}

/** The switches for a quiet, reproducible headless run that reaches no network but the service's. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];
