import { OptionalVariable, PatternVariable } from '../config/environment.decorators.js';
import { Variable } from '../config/variable-metadata.js';

/** Owners are short, printable names; they appear in logs and the token CLI. */
export const OWNER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** RFC 6750 b64token characters, so that any bootstrap token can be sent in a header. */
const TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]{32,512}=*$/;

/**
 * The opaque tokens' variables: the token that exists at start-up and its owner. One part of the
 * service's Environment (src/environment.ts).
 */
export class TokenVariables {
  @Variable(
    'Tokens',
    'A token that exists at start-up, for BOOTSTRAP_OWNER. Generate one with ' +
      '`npm run -s token -- generate`.',
    { secret: true },
  )
  @OptionalVariable()
  @PatternVariable(
    'token',
    TOKEN_PATTERN,
    '32 to 512 characters of A-Z a-z 0-9 . _ ~ + / -, optionally followed by =',
  )
  BOOTSTRAP_TOKEN?: string = undefined;

  @Variable('Tokens', 'The owner of BOOTSTRAP_TOKEN and of the first token issued in development.')
  @PatternVariable(
    'string',
    OWNER_PATTERN,
    '1 to 64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit',
  )
  BOOTSTRAP_OWNER = 'demo';
}
