import { parseArgs } from 'node:util';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OWNER_PATTERN } from './tokens.variables.js';
import { configModule } from '../config/config.module.js';
import { loadEnvironment } from '../environment.js';
import { DatabaseModule } from '../database/database.module.js';
import { SCOPES, type Scope } from './required-scope.decorator.js';
import { generateToken } from './token-format.js';
import { TokensModule } from './tokens.module.js';
import { TokensService } from './tokens.service.js';

export interface CliOutput {
  /** Machine-readable output: the token, the list. */
  out(line: string): void;
  /** Human messages and errors. */
  err(line: string): void;
}

const USAGE = `Usage:
  npm run -s token -- create --owner <owner> [--label <text>] [--scope <scope>]...
                                                 issue a token (printed alone on stdout); --scope, repeatable,
                                                 limits it to ${SCOPES.join(', ')} (default: all)
  npm run -s token -- list                       list tokens (id, owner, label, scopes, created, revoked)
  npm run -s token -- revoke <token-id>          revoke a token from the next request on
  npm run -s token -- generate                   print a random token for BOOTSTRAP_TOKEN (stores nothing)
  npm run -s token -- --help                     this text`;

const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

@Module({})
class TokenCliModule {
  static forRoot(env: ReturnType<typeof loadEnvironment>): DynamicModule {
    return { module: TokenCliModule, imports: [configModule(env), DatabaseModule, TokensModule] };
  }
}

async function withTokens<T>(
  env: Record<string, unknown> | undefined,
  work: (tokens: TokensService) => Promise<T>,
): Promise<T> {
  const context = await NestFactory.createApplicationContext(
    TokenCliModule.forRoot(loadEnvironment(env)),
    {
      logger: false,
      abortOnError: false,
    },
  );
  try {
    return await work(context.get(TokensService));
  } finally {
    await context.close();
  }
}

/**
 * The token command line. Works against the same database as the service,
 * also while it runs. Returns the exit code.
 */
export async function runTokenCli(
  argv: string[],
  io: CliOutput,
  env?: Record<string, unknown>,
): Promise<number> {
  const [command, ...rest] = argv;
  // Asked for, the usage is the answer: stdout, exit 0 (a mistake gets it on stderr, exit 2).
  if (command === 'help' || argv.includes('--help') || argv.includes('-h')) {
    io.out(USAGE);
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: {
        owner: { type: 'string' },
        label: { type: 'string' },
        scope: { type: 'string', multiple: true },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    io.err(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  switch (command) {
    case 'create': {
      const owner = values.owner;
      if (!owner || !OWNER_PATTERN.test(owner) || positionals.length > 0) {
        io.err(`create needs --owner: 1 to 64 characters of A-Z a-z 0-9 . _ -\n${USAGE}`);
        return 2;
      }
      const scopes = values.scope ?? [...SCOPES];
      const unknown = scopes.filter((scope) => !isScope(scope));
      if (unknown.length > 0) {
        io.err(`unknown scope ${unknown.join(', ')}: use ${SCOPES.join(', ')}\n${USAGE}`);
        return 2;
      }
      const label = values.label ?? null;
      const issued = await withTokens(env, (tokens) =>
        tokens.issue(owner, label, undefined, scopes.filter(isScope)),
      );
      io.out(issued.token);
      io.err(
        `Token ${issued.record.id} issued for owner "${owner}". It is not shown again: store it now.`,
      );
      return 0;
    }
    case 'list': {
      const all = await withTokens(env, (tokens) => tokens.list());
      io.out(['id', 'owner', 'label', 'scopes', 'created', 'revoked'].join('\t'));
      for (const t of all) {
        io.out([t.id, t.owner, t.label ?? '', t.scopes, t.createdAt, t.revokedAt ?? ''].join('\t'));
      }
      return 0;
    }
    case 'revoke': {
      const [id] = positionals;
      if (!id || positionals.length !== 1) {
        io.err(`revoke needs one token id (see: list)\n${USAGE}`);
        return 2;
      }
      const revoked = await withTokens(env, (tokens) => tokens.revoke(id));
      if (!revoked) {
        io.err(`No live token with id ${id}`);
        return 1;
      }
      io.err(`Token ${id} revoked`);
      return 0;
    }
    case 'generate':
      io.out(generateToken());
      return 0;
    default:
      io.err(USAGE);
      return 2;
  }
}
