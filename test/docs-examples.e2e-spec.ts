import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HttpVariables } from '../src/http/http.variables.js';
import { type CommandResult, DocReader } from './support/doc-reader.js';
import {
  answerPattern,
  consoleCommands,
  type ExampleCommand,
  matchAnswer,
  scriptCommands,
} from './support/doc-shell.js';
import { type Fence, fencesOf, linkedMarkdown } from './support/markdown-fences.js';

/**
 * Every fenced example of the README and of the docs it links, run in the
 * order a reader meets them, against the built service on a fresh SQLite
 * file, as a newcomer would: `npm start`, then the commands. A fence is either
 * run here or marked in the markdown with `<!-- not run by test: <why> -->`
 * on the line before it; any other fence fails, so a new example cannot go
 * untested.
 *
 * How a fence runs:
 * - `bash`/`sh`/`console`: each command through DocReader (curl itself,
 *   `npm run -s token --` as `node dist/token.main.js`, `npm start` as the
 *   built service, node receivers in the background). An answer the example
 *   shows (`console` output, or a `# 201 {…}` comment) is compared with what
 *   came: `…` is anything, `<subscription id>` and `whsec_…` are copied into
 *   later commands. A `console` example's status is the first one in backticks
 *   in the sentence that introduces it; without one, a curl must not fail,
 *   unless it shows the Error that says so.
 * - `js`: saved under the name its introduction gives ("save this as
 *   `receiver.mjs`") and run by a later command.
 * - The rest, and what the prose around an example asks the reader to do or
 *   to see, are the STEPS below.
 */

const DOCS = ['README.md', ...linkedMarkdown('README.md')];
const FENCES = DOCS.flatMap((file) => fencesOf(file, readFileSync(file, 'utf8')));

/** What the prose around an example makes part of it. */
interface Step {
  file: string;
  /** A text only that fence holds. */
  includes: string;
  /** The prose, quoted or summed up. */
  prose: string;
  before?(reader: DocReader): Promise<void>;
  /** Instead of the fence's commands. */
  run?(fence: Fence, reader: DocReader): Promise<void>;
  after?(reader: DocReader, results: CommandResult[]): Promise<void>;
  /** The answer shown comes from work in the background: ask again until it does. */
  eventually?: boolean;
}

/** A request of the reader's own, with the token of the examples' `$TOKEN`. */
async function request(reader: DocReader, method: string, path: string, body?: unknown) {
  const response = await fetch(`${reader.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${reader.variables.get('TOKEN')}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.text() };
}

const process_ = (reader: DocReader, program: string) => {
  const found = reader.processes.find(({ argv }) => argv.join(' ').includes(program));
  if (!found) throw new Error(`no running ${program}`);
  return found;
};

const STEPS: Step[] = [
  {
    file: 'README.md',
    includes: 'No API token existed',
    prose:
      'On first start the service creates ./data/plant-store.sqlite, runs its migrations, and … logs it once',
    run: async (fence, reader) => {
      expect(existsSync(join(reader.dir, 'data/plant-store.sqlite'))).toBe(true);
      const { source } = answerPattern(fence.body);
      expect(reader.service.output()).toMatch(new RegExp(`(?:^|\\n)[^\\n]*?${source}`));
      // "Take the logged token": it works, for an owner with no plants yet.
      const logged = /\n {4}(pst_[A-Za-z0-9_-]{43})\n/.exec(reader.service.output())![1];
      const plants = await fetch(`${reader.url}/plants`, {
        headers: { authorization: `Bearer ${logged}` },
      });
      expect([plants.status, await plants.text()]).toEqual([200, '[]']);
    },
  },
  {
    file: 'README.md',
    includes: '/plants?limit=2',
    prose: 'after also creating `{"id": 1, "name": "Cactus"}`',
    before: async (reader) => {
      expect(await request(reader, 'POST', '/plants', { id: 1, name: 'Cactus' })).toEqual({
        status: 200,
        body: '{"name":"Cactus"}',
      });
    },
  },
  {
    file: 'docs/API.md',
    includes: 'createClient<paths>',
    prose: 'To call the API from TypeScript, generate types from the document and use them',
    run: runTypeScriptClient,
  },
  {
    file: 'docs/TOKENS.md',
    includes: 'npm run -s token -- revoke <token-id>',
    prose:
      '`create` prints the token alone on stdout …; `list` shows id, owner, label, scopes, created and revoked; ' +
      '`revoke` takes the id `list` shows; the token is refused from the next request on',
    after: async (reader, [created, listed, revoked, generated]) => {
      const token = created.stdout.trim();
      expect(created.stdout).toMatch(/^pst_[A-Za-z0-9_-]{43}\n$/);
      const [header, ...rows] = listed.stdout.trim().split('\n');
      expect(header.split('\t')).toEqual(['id', 'owner', 'label', 'scopes', 'created', 'revoked']);
      const id = reader.copied.get('<token-id>')!;
      const row = rows.find((line) => line.startsWith(`${id}\t`));
      expect(row, listed.stdout).toBeDefined();
      expect(row!.split('\t').slice(1, 4)).toEqual(['alice', 'laptop', 'plants:read']);
      expect(revoked.code).toBe(0);
      const refused = await fetch(`${reader.url}/plants`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(refused.status).toBe(401);
      // A suitable value for BOOTSTRAP_TOKEN (TOKENS.md, "Tokens at startup").
      expect(generated.stdout).toMatch(/^[A-Za-z0-9._~+/-]{32,512}=*\n$/);
    },
  },
  {
    file: 'docs/WEBHOOKS.md',
    includes: 'WEBHOOK_ALLOW_HTTP=true WEBHOOK_ALLOW_PRIVATE_TARGETS=true npm start',
    prose: 'the service with both opt-ins (each is logged as a warning at start-up)',
    after: async (reader) => {
      expect(reader.service.output()).toMatch(/WARN[^\n]*WEBHOOK_ALLOW_HTTP=true/);
      expect(reader.service.output()).toMatch(/WARN[^\n]*WEBHOOK_ALLOW_PRIVATE_TARGETS=true/);
    },
  },
  {
    file: 'docs/WEBHOOKS.md',
    includes: '/webhooks/<subscription id>/deliveries',
    prose:
      'Within a second the receiver prints the event: `POST /plants`, the headers `webhook-id`, ' +
      '`webhook-timestamp` and `webhook-signature`, and the body `{"id":1,"name":"Fern"}`. ' +
      "The subscription's deliveries list shows it delivered",
    before: async (reader) => {
      const receiver = process_(reader, 'node -e');
      await receiver.printed(/\{"id":1,"name":"Fern"\}/);
      const printed = receiver.output();
      expect(printed).toMatch(/^POST \/plants \{/m);
      for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
        expect(printed).toContain(`'${header}': `);
    },
    eventually: true,
  },
  {
    file: 'docs/WEBHOOKS.md',
    includes: 'node receiver.mjs',
    prose:
      'The next plant of that owner (`{"id": 2, "name": "Ivy"}`) prints `new plant {"id":2,"name":"Ivy"}`; ' +
      'a request with a wrong signature gets a 400.',
    after: async (reader) => {
      const receiver = process_(reader, 'receiver.mjs');
      expect(await request(reader, 'POST', '/plants', { id: 2, name: 'Ivy' })).toMatchObject({
        status: 200,
      });
      await receiver.printed(/new plant \{"id":2,"name":"Ivy"\}\n/);
      const forged = await fetch(await reader.localize('http://127.0.0.1:8080/verified'), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': 'msg_forged',
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
        },
        body: '{"id":3,"name":"Forged"}',
      });
      expect(forged.status).toBe(400);
      expect(receiver.output()).not.toContain('Forged');
    },
  },
];

const where = (fence: Fence, line = 0) => `${fence.file}:${fence.line + 1 + line}`;
const stepOf = (fence: Fence) =>
  STEPS.find((step) => step.file === fence.file && fence.body.includes(step.includes));

/**
 * The TypeScript client of API.md: typechecked against the types the bash
 * example before it generated (plant-store.ts), then run with `token` as the
 * reader's `$TOKEN`; what it gets is as its comment says.
 */
async function runTypeScriptClient(fence: Fence, reader: DocReader): Promise<void> {
  const code = await reader.localize(fence.body);
  writeFileSync(join(reader.dir, 'client.ts'), `declare const token: string;\n${code}`);
  const program = ts.createProgram([join(reader.dir, 'client.ts')], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    skipLibCheck: true,
    types: [],
  });
  const problems = ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(problems, `${where(fence)} does not typecheck`).toEqual([]);
  const js = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  writeFileSync(
    join(reader.dir, 'client.mjs'),
    `const token = process.env.TOKEN;\n${js}\nconsole.log(JSON.stringify({ data, error }));\n`,
  );
  const ran = await reader.run('TOKEN="$TOKEN" node client.mjs');
  expect(ran.code, ran.stderr).toBe(0);
  // "data: { name: string; tag?: string } on 200; error: { error: number; message: string } otherwise"
  const { data, error } = JSON.parse(ran.stdout);
  if (data === undefined)
    expect(error).toEqual({ error: expect.any(Number), message: expect.any(String) });
  else {
    expect(error).toBeUndefined();
    expect(data).toEqual({ name: 'Fern' });
  }
}

/** Compares a `curl -i` answer: the status line, the headers shown (others may come), the body. */
function matchWithHeaders(shown: string, actual: string): Map<string, string> | null {
  const [shownHead, shownBody = ''] = shown.split(/\n\n([^]*)/);
  const [actualHead, actualBody = ''] = actual.replace(/\r\n/g, '\n').split(/\n\n([^]*)/);
  const [shownStatus, ...shownHeaders] = shownHead.split('\n');
  const [actualStatus, ...actualHeaders] = actualHead.split('\n');
  const status = matchAnswer(shownStatus, actualStatus);
  const body = matchAnswer(shownBody, actualBody);
  const headers = shownHeaders.map((header) =>
    actualHeaders.some((line) => matchAnswer(header.toLowerCase(), line.toLowerCase())),
  );
  return status && body && headers.every(Boolean) ? new Map([...status, ...body]) : null;
}

/** Checks a curl's answer against what the example shows; copies the values it names. */
function checkCurl(
  fence: Fence,
  command: ExampleCommand,
  result: CommandResult,
  reader: DocReader,
): void {
  const at = `${where(fence, command.line)}: ${command.source}\n${result.stderr}`;
  expect(result.status, at).toBeDefined();
  const leadStatus = fence.lang === 'console' ? /`(\d{3})`/.exec(fence.lead)?.[1] : undefined;
  const status = command.shown?.status ?? (leadStatus ? Number(leadStatus) : undefined);
  let error: unknown;
  try {
    error = JSON.parse(result.stdout).error;
  } catch {
    error = undefined;
  }
  if (typeof error === 'number')
    expect(result.status, `${at}: an Error's "error" is its status`).toBe(error);
  if (status !== undefined) expect(result.status, at).toBe(status);
  else if (typeof error !== 'number' || !command.shown) expect(result.status, at).toBeLessThan(400);
  if (!command.shown) return;
  const headers = result.argv.some(
    (arg) => arg === '--include' || /^-[a-zA-Z]*i[a-zA-Z]*$/.test(arg),
  );
  const copied = headers
    ? matchWithHeaders(command.shown.output, result.stdout)
    : matchAnswer(command.shown.output, result.stdout);
  // Not as shown: the difference, with the shown answer's `…` and placeholders.
  if (!copied) expect(result.stdout, at).toBe(command.shown.output);
  for (const [shown, value] of copied!) reader.copied.set(shown, value);
}

async function runCommands(
  fence: Fence,
  commands: ExampleCommand[],
  reader: DocReader,
  step?: Step,
): Promise<CommandResult[]> {
  const results: CommandResult[] = [];
  for (const command of commands) {
    const once = async () => {
      const result = await reader.run(command.source);
      const at = `${where(fence, command.line)}: ${command.source}`;
      expect(result.code, `${at}\n${result.stderr}`).toBe(0);
      if (result.argv[0] === 'curl') checkCurl(fence, command, result, reader);
      else if (command.shown)
        expect(matchAnswer(command.shown.output, result.stdout), at).not.toBeNull();
      return result;
    };
    results.push(
      step?.eventually ? await vi.waitFor(once, { timeout: 20_000, interval: 50 }) : await once(),
    );
  }
  return results;
}

async function runFence(fence: Fence, reader: DocReader): Promise<void> {
  const step = stepOf(fence);
  await step?.before?.(reader);
  if (step?.run) return step.run(fence, reader);
  const body = await reader.localize(fence.body);
  let results: CommandResult[] = [];
  if (fence.lang === 'bash' || fence.lang === 'sh')
    results = await runCommands(fence, scriptCommands(body), reader, step);
  else if (fence.lang === 'console')
    results = await runCommands(fence, consoleCommands(body), reader, step);
  else if (
    (fence.lang === 'js' || fence.lang === 'mjs') &&
    /save this as `([^`]+)`/.test(fence.lead)
  )
    writeFileSync(join(reader.dir, /save this as `([^`]+)`/.exec(fence.lead)![1]), body);
  else
    throw new Error(
      `${where(fence)}: a ${fence.lang || 'bare'} fence the test does not know how to run: ` +
        'run it (a STEP in test/docs-examples.e2e-spec.ts) or mark it ' +
        '<!-- not run by test: <why> --> on the line before it',
    );
  await step?.after?.(reader, results);
}

describe('docs examples, in the order a reader meets them', () => {
  let reader: DocReader;

  beforeAll(async () => {
    reader = new DocReader(mkdtempSync(join(tmpdir(), 'plant-store-docs-')));
    // `npm install && npm start` (README): the built service, no variables set.
    await reader.startService();
  });

  afterAll(async () => {
    await reader?.close();
    if (reader) rmSync(reader.dir, { recursive: true, force: true });
  });

  it('reads every doc: each docs/*.md is linked from the README', () => {
    const docs = readdirSync('docs').filter((name) => name.endsWith('.md'));
    expect(docs.map((name) => `docs/${name}`).filter((file) => !DOCS.includes(file))).toEqual([]);
  });

  it("npm start listens where the examples call it, the defaults' http://127.0.0.1:3000", () => {
    const defaults = new HttpVariables();
    expect([defaults.HOST, defaults.PORT]).toEqual(['127.0.0.1', 3000]);
  });

  it('the files a reason for not running an example names exist', () => {
    const named = FENCES.flatMap(
      ({ notRun }) => notRun?.match(/\b(?:test|scripts|src)\/\S+\.\w+/g) ?? [],
    );
    expect(named.filter((file) => !existsSync(file))).toEqual([]);
  });

  it('every step names exactly one example', () => {
    for (const step of STEPS)
      expect(
        FENCES.filter((fence) => fence.file === step.file && fence.body.includes(step.includes)),
        `${step.file}: ${step.includes}`,
      ).toHaveLength(1);
  });

  for (const fence of FENCES) {
    const title = `${fence.file}:${fence.line} (${fence.lang || 'bare'})`;
    if (fence.notRun) it.skip(`${title}: not run: ${fence.notRun}`, () => undefined);
    // A busy machine makes the token CLI (a second or more each) and the compiler slow.
    else it(title, () => runFence(fence, reader), 60_000);
  }
});
