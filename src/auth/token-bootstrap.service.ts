import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { ProcessVariables } from '../config/process.variables.js';
import type { TokenVariables } from './tokens.variables.js';
import { isUniqueViolation } from '../database/database-errors.js';
import { TokensService } from './tokens.service.js';

/**
 * Makes the first token available without a manual step:
 * - BOOTSTRAP_TOKEN (owner BOOTSTRAP_OWNER) is created if it does not exist;
 *   a bootstrap token that was revoked stays revoked (revocation wins).
 * - Outside production, when no token exists at all, one is issued for
 *   BOOTSTRAP_OWNER and logged once, so a newcomer can authorise in Swagger UI.
 */
@Injectable()
export class TokenBootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Tokens');

  constructor(
    private readonly tokens: TokensService,
    private readonly config: ConfigService<ProcessVariables & TokenVariables, true>,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const owner = this.config.get('BOOTSTRAP_OWNER', { infer: true });
    const bootstrapToken = this.config.get('BOOTSTRAP_TOKEN', { infer: true });
    if (bootstrapToken) {
      await this.ensureBootstrapToken(bootstrapToken, owner);
      return;
    }
    if (this.config.get('NODE_ENV', { infer: true }) === 'production') return;
    if ((await this.tokens.count()) > 0) return;
    const { token } = await this.tokens.issue(owner, 'first token (development)');
    this.logger.warn(
      `No API token existed, so one was issued for owner "${owner}". It is shown only now:\n\n    ${token}\n\n` +
        'Use it as "Authorization: Bearer <token>" (Authorize in Swagger UI at /docs). ' +
        'Issue more with: npm run -s token -- create --owner <name>',
    );
  }

  private async ensureBootstrapToken(token: string, owner: string): Promise<void> {
    const existing = await this.tokens.findByToken(token);
    if (!existing) {
      try {
        await this.tokens.issue(owner, 'BOOTSTRAP_TOKEN', token);
        this.logger.log(`BOOTSTRAP_TOKEN registered for owner "${owner}"`);
      } catch (error) {
        // Several instances starting at once all find no token; the first insert wins.
        if (!isUniqueViolation(error)) throw error;
        this.logger.log('BOOTSTRAP_TOKEN was registered by another instance starting at once');
      }
    } else if (existing.revokedAt !== null) {
      this.logger.warn('BOOTSTRAP_TOKEN was revoked and stays revoked; unset or change it');
    } else if (existing.owner !== owner) {
      this.logger.warn(
        `BOOTSTRAP_TOKEN already belongs to owner "${existing.owner}", not "${owner}"; left as it is`,
      );
    }
  }
}
