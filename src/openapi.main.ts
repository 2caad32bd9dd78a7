import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createApp } from './app.setup.js';
import { buildOpenApiDocument } from './openapi/openapi.js';
import { serializeOpenApiDocument } from './openapi/serialize-openapi.js';

/**
 * `npm run openapi:export`: writes openapi.json from the code. The app is
 * built as main.ts builds it, on a throw-away in-memory database.
 */
async function exportOpenApi(path = 'openapi.json'): Promise<void> {
  const { app } = await createApp({
    // Production needs a cursor key; this app makes no cursor.
    env: {
      NODE_ENV: 'production',
      DATABASE_URL: 'sqlite::memory:',
      CURSOR_SECRET: randomBytes(32).toString('base64url'),
    },
    logger: false,
  });
  try {
    writeFileSync(path, serializeOpenApiDocument(buildOpenApiDocument(app)));
    process.stderr.write(`Wrote ${path}\n`);
  } finally {
    await app.close();
  }
}

await exportOpenApi(process.argv[2]);
