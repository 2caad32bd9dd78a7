import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_PARTS, validateEnvironment } from '../environment.js';
import { checkServiceVariables } from './service-variables.js';

const VARIABLES = new Set(ENVIRONMENT_PARTS.flatMap((Part) => Object.keys(new Part())));

/** Upper-case names that are not the service's: the compose database's, the image's, Node's. */
const OTHERS = new Set([
  'POSTGRES_USER',
  'POSTGRES_PASSWORD',
  'POSTGRES_DB',
  'NODE_IMAGE',
  'NODE_OPTIONS',
  'NODE_COMPILE_CACHE',
]);

/** The UPPER_SNAKE_CASE words of a file, the names a deployment file sets or mentions. */
const namesIn = (text: string): string[] => [
  ...new Set(text.match(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g) ?? []),
];

const filesUnder = (folder: string): string[] =>
  readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });

describe('the files that set environment variables', () => {
  it('.env.example lists every variable, with its default', () => {
    const example = parseEnv(readFileSync('.env.example', 'utf8'));
    const listed = Object.keys(example).filter((name) => !OTHERS.has(name));
    expect(listed.sort()).toEqual([...VARIABLES].sort());
    expect({ ...validateEnvironment(example) }).toEqual({ ...validateEnvironment({}) });
  });

  it.each(['.env.example', 'docker-compose.yml', 'Dockerfile', ...filesUnder('deploy/helm')])(
    '%s names only variables the service reads',
    (path) => {
      const unknown = namesIn(readFileSync(path, 'utf8')).filter(
        (name) => !VARIABLES.has(name) && !OTHERS.has(name) && !name.startsWith('OTEL_'),
      );
      expect(unknown).toEqual([]);
    },
  );

  it('docker-compose.yml sets valid values', () => {
    const compose = readFileSync('docker-compose.yml', 'utf8');
    const api = compose.slice(compose.indexOf('\n  api:'));
    const block = /\n {4}environment:\n((?: {6}.*\n)+)/.exec(api)?.[1] ?? '';
    const settings = Object.fromEntries(
      [...block.matchAll(/^ {6}([A-Z0-9_]+): (.*)$/gm)].map(([, name, value]) => [
        name,
        // ${NAME:-default} stands for its default, ${NAME:?…} for a valid value of NAME.
        value
          .replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')
          .replace(/\$\{BOOTSTRAP_TOKEN:\?[^}]*\}/, 'pst_compose-check-0123456789abcdefghijkl')
          .replace(/\$\{CURSOR_SECRET:\?[^}]*\}/, 'compose-check-cursor-secret-0123456789abcdef'),
      ]),
    );
    expect(Object.keys(settings).length).toBeGreaterThan(3);
    // What the service needs on top in production (NODE_ENV there): CURSOR_SECRET.
    expect(() => checkServiceVariables(validateEnvironment(settings))).not.toThrow();
  });
});
