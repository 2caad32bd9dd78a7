import type { ConfigService } from '@nestjs/config';
import { Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProcessVariables } from '../config/process.variables.js';
import type { TokenVariables } from './tokens.variables.js';

type Variables = ProcessVariables & TokenVariables;
import { TokenBootstrapService } from './token-bootstrap.service.js';
import type { TokensService } from './tokens.service.js';

const config = (values: Partial<Variables>) =>
  ({ get: (key: keyof Variables) => values[key] }) as unknown as ConfigService<Variables, true>;

const uniqueViolation = () =>
  new QueryFailedError('INSERT', [], Object.assign(new Error('duplicate key'), { code: '23505' }));

describe('TokenBootstrapService', () => {
  afterEach(() => vi.restoreAllMocks());

  it('starts when another instance registered BOOTSTRAP_TOKEN between its lookup and its insert', async () => {
    vi.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const tokens = {
      findByToken: vi.fn().mockResolvedValue(null),
      issue: vi.fn().mockRejectedValue(uniqueViolation()),
    };
    const service = new TokenBootstrapService(
      tokens as unknown as TokensService,
      config({ BOOTSTRAP_TOKEN: 'pst_bootstrap', BOOTSTRAP_OWNER: 'demo' }),
    );
    await expect(service.onApplicationBootstrap()).resolves.toBeUndefined();
    expect(tokens.issue).toHaveBeenCalledWith('demo', 'BOOTSTRAP_TOKEN', 'pst_bootstrap');
  });

  it('still fails on any other error', async () => {
    const tokens = {
      findByToken: vi.fn().mockResolvedValue(null),
      issue: vi.fn().mockRejectedValue(new Error('ECONNREFUSED')),
    };
    const service = new TokenBootstrapService(
      tokens as unknown as TokensService,
      config({ BOOTSTRAP_TOKEN: 'pst_bootstrap', BOOTSTRAP_OWNER: 'demo' }),
    );
    await expect(service.onApplicationBootstrap()).rejects.toThrow('ECONNREFUSED');
  });
});
