/**
 * The service's start-up hook for tracing: `node --import=./dist/tracing/preload.js
 * dist/bundle/main.js` (the Dockerfile, `npm run start:prod`, the tests and the
 * bench all start the service this way). It runs from the unbundled build: the
 * modules OpenTelemetry patches stay outside the bundle (scripts/bundle-service.mjs).
 *
 * OpenTelemetry has to patch pino, pg, http and better-sqlite3 before the
 * application imports them, so this runs before the application exists, and
 * so before src/config/ has read and validated the environment. That is why
 * it reads the OTEL_* variables itself, from process.env and from the same
 * `.env` file the service reads (the real environment wins). It reads only
 * them, and only to decide whether to load the SDK: the SDK then takes its
 * settings from the same variables, as OpenTelemetry documents them.
 *
 * With no variable asking for traces nothing else is loaded: no SDK, no
 * loader hook, no patched module, no span.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { tracingRequested } from './tracing-requested.js';

const fromFile = existsSync('.env') ? parseEnv(readFileSync('.env', 'utf8')) : {};
for (const [name, value] of Object.entries(fromFile)) {
  if (name.startsWith('OTEL_') && process.env[name] === undefined) process.env[name] = value;
}

if (tracingRequested(process.env)) {
  const { startTracing } = await import('./start-tracing.js');
  await startTracing();
}
