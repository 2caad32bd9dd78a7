import { isIP } from 'node:net';
import type { HostResolver } from './host-resolver.js';
import { isPublicAddress } from './public-address.js';

/** What decides whether a subscription URL can ever be delivered. */
export interface TargetRules {
  allowHttp: boolean;
  allowPrivateTargets: boolean;
}

const PRIVATE_OPT_IN =
  'WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows loopback, private and other non-public receivers';

/** How long a subscription waits for its host's addresses before taking it as not resolving yet. */
const RESOLVE_TIMEOUT_MS = 2000;

/** The URL's host without the brackets of an IPv6 literal. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

const isLocalhost = (host: string): boolean => /(^|\.)localhost\.?$/i.test(host);

/**
 * Why a subscription URL is refused, or undefined when it is acceptable as
 * written; a host name is checked further by resolvedTargetProblem. Each
 * refusal an operator could lift names the setting that lifts it.
 */
export function webhookUrlProblem(text: string, rules: TargetRules): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url must be an absolute URL such as https://receiver.example.com/hooks';
  }
  if (url.protocol !== 'https:' && !(rules.allowHttp && url.protocol === 'http:')) {
    if (rules.allowHttp) return 'url must use https or http';
    return url.protocol === 'http:'
      ? 'url must use https (WEBHOOK_ALLOW_HTTP=true allows http)'
      : 'url must use https';
  }
  if (url.username !== '' || url.password !== '') {
    return 'url must not contain a user name or password';
  }
  if (url.hash !== '') return 'url must not contain a fragment (#…)';
  if (url.href.length > 2048) return 'url must be at most 2048 characters long';
  if (rules.allowPrivateTargets) return undefined;
  const host = hostOf(url);
  if (isLocalhost(host)) return `url host localhost is not a public address: ${PRIVATE_OPT_IN}`;
  if (isIP(host) !== 0 && !isPublicAddress(host)) {
    return `url host is not a public unicast address: ${PRIVATE_OPT_IN}`;
  }
  return undefined;
}

/**
 * Why a host name that resolves only to refused addresses is refused now,
 * without saying which addresses (they may be internal); undefined when it
 * resolves to public ones, or does not resolve (yet): the sender checks
 * again at every attempt.
 */
export async function resolvedTargetProblem(
  url: URL,
  rules: TargetRules,
  resolver: HostResolver,
): Promise<string | undefined> {
  const host = hostOf(url);
  if (rules.allowPrivateTargets || isIP(host) !== 0) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), RESOLVE_TIMEOUT_MS);
  });
  const addresses = await Promise.race([resolver.resolve(host).catch(() => undefined), gaveUp]);
  clearTimeout(timer);
  // The sender refuses a host with any non-public address: so does this.
  if (addresses?.length && addresses.some(({ address }) => !isPublicAddress(address))) {
    return `url host ${host} resolves to an address that is not public: ${PRIVATE_OPT_IN}`;
  }
  return undefined;
}
