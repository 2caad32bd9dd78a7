import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, findChromium } from './support/chromium.js';
import { listen } from './support/listen.js';
import { documentedResponses } from './support/openapi-validator.js';
import { useTestApp } from './support/test-app.js';

const executablePath = findChromium();

/** Git-ignored; docs/swagger-ui.png in the README is a copy of it. */
const SCREENSHOT = resolve('test-results/swagger-ui/list-plants-200.png');

/** An id above 2^53: Swagger UI sends the digits as typed, and the service keeps every one. */
const ID = '9007199254740993';

/** Skipped without Chromium: findChromium's warning says how to get one. */
const TITLE =
  'Swagger UI at /docs in headless Chromium (needs Chromium: /usr/bin/chromium or CHROMIUM_PATH)';

describe.skipIf(!executablePath)(TITLE, () => {
  const t = useTestApp('sqlite');
  let context: BrowserContext;
  let userDataDir: string;
  let page: Page;
  let token: string;
  /** Problems of the responses the browser received, checked against openapi.json. */
  const checks: Array<Promise<string[]>> = [];
  const seen: string[] = [];

  beforeAll(async () => {
    const baseUrl = await listen(t.current);
    token = await t.current.tokenFor('swagger-ui');
    userDataDir = await mkdtemp(join(tmpdir(), 'plant-store-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    // Fail with the locator that did not show up, well within the test's own timeout.
    page.setDefaultTimeout(10_000);
    page.on('response', (response) => {
      const { pathname } = new URL(response.url());
      if (!pathname.startsWith('/plants')) return;
      const method = response.request().method();
      seen.push(`${method} ${pathname} -> ${response.status()}`);
      checks.push(
        response.text().then((text) =>
          documentedResponses().problems({
            method,
            url: response.url(),
            status: response.status(),
            headers: response.headers(),
            text,
          }),
        ),
      );
    });
    await page.goto(`${baseUrl}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();
  });

  afterAll(async () => {
    await context?.close();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  /** Expands an operation and turns on "Try it out". */
  async function tryOut(operationId: string): Promise<Locator> {
    const operation = page.locator(`#operations-plants-${operationId}`);
    await operation.locator('.opblock-summary').first().click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    return operation;
  }

  /** Presses Execute and reads the "Server response" that Swagger UI shows. */
  async function execute(operation: Locator): Promise<{ status: number; body: string }> {
    await operation.getByRole('button', { name: 'Execute' }).click();
    const live = operation.locator('.live-responses-table .response');
    await live.waitFor();
    const status = Number((await live.locator('.response-col_status').innerText()).trim());
    // "Response body" is a highlighted code block; "Response headers" a plain one below it.
    const body = live.locator('.response-col_description .highlight-code pre');
    return {
      status,
      body: (await body.count()) > 0 ? (await body.first().innerText()).trim() : '',
    };
  }

  it('authorizes with a bearer token, then creates, lists and deletes a plant with "Try it out"', async () => {
    expect(await page.locator('.swagger-ui .info .title').innerText()).toContain('Plant Store');

    await page.locator('.auth-wrapper button.authorize').click();
    const dialog = page.locator('.dialog-ux .modal-ux');
    // The scheme's description reads as written: nothing in it is taken for an HTML tag.
    expect(await dialog.innerText()).toContain('scope="plants:write"');
    await dialog.locator('input').first().fill(token);
    await dialog.locator('.auth-btn-wrapper button.authorize').click();
    // Swagger UI swaps Authorize for Logout once it holds the token.
    await dialog.locator('button', { hasText: 'Logout' }).waitFor();
    expect(await dialog.locator('h6').innerText()).toBe('Authorized');
    await dialog.locator('button', { hasText: 'Close' }).click();

    const create = await tryOut('createPlant');
    await create
      .locator('textarea.body-param__text')
      .fill(`{"id": ${ID}, "name": "Monstera deliciosa", "tag": "tropical"}`);
    const created = await execute(create);
    expect(created.status).toBe(200);
    expect(JSON.parse(created.body)).toEqual({ name: 'Monstera deliciosa', tag: 'tropical' });

    const list = await tryOut('listPlants');
    // Nothing pre-filled: a made-up cursor would list only the plants after it.
    expect(await list.locator('tr[data-param-name="after"] input').inputValue()).toBe('');
    const listed = await execute(list);
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.body)).toEqual([{ name: 'Monstera deliciosa', tag: 'tropical' }]);
    await mkdir(join(SCREENSHOT, '..'), { recursive: true });
    await list.scrollIntoViewIfNeeded();
    await page.screenshot({ path: SCREENSHOT, fullPage: false });

    const remove = await tryOut('deletePlant');
    await remove.locator('tr[data-param-name="id"] input').fill(ID);
    const deleted = await execute(remove);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');

    // The service agrees: the plant with every digit of its id is gone.
    const after = await t.current.http().get('/plants').set('Authorization', `Bearer ${token}`);
    expect(after.body).toEqual([]);
    expect(seen).toEqual([
      'POST /plants -> 200',
      'GET /plants -> 200',
      `DELETE /plants/${ID} -> 204`,
    ]);
    expect((await Promise.all(checks)).flat()).toEqual([]);
  });
  it('shows NewPlant under Schemas as an object with its properties, id an int64', async () => {
    const model = page
      .locator('section.models article.json-schema-2020-12[data-json-schema-level="0"]')
      .filter({ has: page.locator('.json-schema-2020-12__title', { hasText: /^NewPlant$/ }) });
    const type = (schema: Locator) =>
      schema.locator('.json-schema-2020-12-head .json-schema-2020-12__attribute--primary').first();
    await model.scrollIntoViewIfNeeded();
    // An allOf of Plant and the id shows here as "(any & object)".
    expect(await type(model).innerText()).toBe('object');
    await model.locator('.json-schema-2020-12-accordion').first().click();
    const properties = model.locator('li.json-schema-2020-12-property');
    await properties.first().waitFor();
    const rows = [];
    for (const property of await properties.all()) {
      rows.push({
        name: await property.locator('.json-schema-2020-12__title').first().innerText(),
        type: await type(property).innerText(),
        constraint: await property.locator('.json-schema-2020-12__constraint').first().innerText(),
        required: (await property.getAttribute('class'))!.includes('--required'),
      });
    }
    expect(rows).toEqual([
      { name: 'id', type: 'integer', constraint: 'int64', required: true },
      { name: 'name', type: 'string', constraint: '[1, 255] characters', required: true },
      { name: 'tag', type: 'string', constraint: '≤ 255 characters', required: false },
    ]);
  });
});
