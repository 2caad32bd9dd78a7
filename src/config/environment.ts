import { plainToInstance, Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  validateSync,
} from 'class-validator';

export const NODE_ENVS = ['development', 'test', 'production'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

/** Owners are short, printable names; they appear in logs and the token CLI. */
export const OWNER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** RFC 6750 b64token characters, so that any bootstrap token can be sent in a header. */
const TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]{32,512}=*$/;

const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;

const emptyToUndefined = ({ value }: { value: unknown }): unknown =>
  value === '' ? undefined : value;

/**
 * Every environment variable the service reads, with its default. This class
 * is the only place that knows about process.env (through @nestjs/config);
 * the rest of the code asks ConfigService<Environment, true>.
 */
export class Environment {
  @IsIn(NODE_ENVS)
  NODE_ENV: NodeEnv = 'development';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  @Matches(/^[^\s]+$/, { message: 'HOST must be a host name or address' })
  HOST = '127.0.0.1';

  /** `sqlite:<path>` (or `sqlite::memory:`) or `postgres://user@host:port/db`. */
  @Matches(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, {
    message:
      'DATABASE_URL must be sqlite:<file path> or postgres://user:password@host:port/database',
  })
  DATABASE_URL = 'sqlite:./data/plant-store.sqlite';

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  DB_POOL_SIZE = 10;

  /** How long a request waits for a database connection before it is a 503. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600_000)
  DB_CONNECT_TIMEOUT_MS = 5000;

  /** PostgreSQL statement_timeout; SQLite's busy timeout. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600_000)
  DB_STATEMENT_TIMEOUT_MS = 10_000;

  /** Largest request body accepted; larger ones are a 413. */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  @Max(100 * 1024 * 1024)
  BODY_LIMIT_BYTES = 1024 * 1024;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(TOKEN_PATTERN, {
    message:
      'BOOTSTRAP_TOKEN must be 32 to 512 characters of A-Z a-z 0-9 . _ ~ + / - (generate one with: npm run token -- generate)',
  })
  BOOTSTRAP_TOKEN?: string;

  @Matches(OWNER_PATTERN, {
    message:
      'BOOTSTRAP_OWNER must be 1 to 64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit',
  })
  BOOTSTRAP_OWNER = 'demo';
}

/**
 * Validates the raw environment; used as @nestjs/config's `validate` hook and
 * by the command-line tools. Throws one error that names every bad variable.
 */
export function validateEnvironment(raw: Record<string, unknown>): Environment {
  const known = Object.keys(new Environment());
  const relevant: Record<string, unknown> = {};
  for (const key of [...known, 'BOOTSTRAP_TOKEN']) {
    if (raw[key] !== undefined) relevant[key] = raw[key];
  }
  const env = plainToInstance(Environment, relevant, {
    exposeDefaultValues: true,
  });
  const errors = validateSync(env, { skipMissingProperties: false });
  if (errors.length > 0) {
    // Values are left out on purpose: DATABASE_URL and BOOTSTRAP_TOKEN hold secrets.
    const lines = errors.flatMap((e) =>
      Object.values(e.constraints ?? {}).map((message) => `  ${message}`),
    );
    throw new Error(`Invalid environment configuration:\n${lines.join('\n')}`);
  }
  return env;
}
