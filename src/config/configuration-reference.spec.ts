import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CONFIGURATION_REFERENCE_PATH,
  renderConfigurationReference,
} from './configuration-reference.js';
import { IntVariable } from './environment.decorators.js';
import { ENVIRONMENT_PARTS } from '../environment.js';
import { describeVariables, Variable } from './variable-metadata.js';

describe('docs/CONFIGURATION.md', () => {
  it('is committed and matches what the code generates', () => {
    const committed = readFileSync(CONFIGURATION_REFERENCE_PATH, 'utf8');
    expect(
      committed === renderConfigurationReference(ENVIRONMENT_PARTS),
      `${CONFIGURATION_REFERENCE_PATH} differs from the variables classes: run npm run config:docs and commit the result`,
    ).toBe(true);
  });

  it('has every variable in a table row with its type and default, and its meaning below', () => {
    const reference = renderConfigurationReference(ENVIRONMENT_PARTS);
    for (const variable of ENVIRONMENT_PARTS.flatMap((part) => describeVariables(part))) {
      expect(reference, variable.name).toContain(`| \`${variable.name}\``);
      expect(reference, variable.name).toContain(`- \`${variable.name}\`: `);
    }
    expect(reference).toMatch(/\| `PORT` +\| integer +\| `3000` +\|/);
    expect(reference).toMatch(
      /\| `DATABASE_URL` +\| URL, secret +\| `sqlite:.\/data\/plant-store.sqlite` +\|/,
    );
    expect(reference).toMatch(/\| `REDIS_URL` +\| URL, secret +\| unset +\|/);
    expect(reference).toContain(
      '- `PORT`: TCP port to listen on; 0 picks a free one. Allowed: an integer from 0 to 65535.',
    );
  });

  it('keeps its lines within 120 characters', () => {
    const long = renderConfigurationReference(ENVIRONMENT_PARTS)
      .split('\n')
      .filter((line) => line.length > 120);
    expect(long).toEqual([]);
  });
});

describe('describeVariables', () => {
  it('gives each variable its group, meaning, type, allowed values and default', () => {
    const port = ENVIRONMENT_PARTS.flatMap((part) => describeVariables(part)).find(
      (variable) => variable.name === 'PORT',
    );
    expect(port).toEqual({
      name: 'PORT',
      group: 'HTTP server',
      meaning: 'TCP port to listen on; 0 picks a free one.',
      secret: false,
      type: 'integer',
      allowed: 'an integer from 0 to 65535',
      defaultValue: 3000,
    });
  });

  it('refuses a variable declared without @Variable or without a rule', () => {
    class Undocumented {
      @IntVariable(0, 1)
      A = 0;
    }
    class Unruled {
      @Variable('Process', 'A variable without a rule.')
      B = 0;
    }
    expect(() => describeVariables(Undocumented)).toThrow(/A needs both @Variable/);
    expect(() => describeVariables(Unruled)).toThrow(/B needs both @Variable/);
  });
});
