import { RequestScope } from '../../src/database/request-scope.js';
import { TokensRepository } from '../../src/auth/tokens.repository.js';
import type { SqlFeature } from './sql-case.js';

const TOKEN = {
  id: '00000000-0000-4000-8000-000000000001',
  tokenHash: 'a'.repeat(64),
  owner: 'sql-tokens',
  label: 'snapshot',
  scopes: 'plants:read',
  createdAt: '2025-01-01T00:00:00.000Z',
  revokedAt: null,
};

export const tokensSql: SqlFeature = {
  title: 'the API tokens (src/auth)',
  path: 'src/auth/sql/tokens',
  cases: [
    {
      title: 'TokensRepository.insert: a new token (the token CLI, BOOTSTRAP_TOKEN, the tests)',
      run: ({ get, capture }) => capture(() => get(TokensRepository).insert({ ...TOKEN })),
    },
    {
      title: 'TokensRepository.live: the owner and scopes of a live token, on every request',
      run: ({ get, capture }) =>
        capture(() => get(TokensRepository).live(TOKEN.tokenHash, RequestScope.background)),
    },
    {
      title: 'TokensRepository.findOne: a token by hash (BOOTSTRAP_TOKEN at start-up)',
      run: ({ get, capture }) => capture(() => get(TokensRepository).findOne(TOKEN.tokenHash)),
    },
    {
      title: 'TokensRepository.list: every token, oldest first (token CLI)',
      run: ({ get, capture }) => capture(() => get(TokensRepository).list()),
    },
    {
      title: 'TokensRepository.count: whether any token exists (start-up, token CLI)',
      run: ({ get, capture }) => capture(() => get(TokensRepository).count()),
    },
    {
      title: 'TokensRepository.revoke: marks a live token revoked (token CLI)',
      run: ({ get, capture }) =>
        capture(() => get(TokensRepository).revoke(TOKEN.id, '2025-01-02T00:00:00.000Z')),
    },
  ],
};
