/**
 * Why a subscription URL is refused, or undefined when it is acceptable.
 * Whether its host is a public address is decided at delivery time, when
 * it is resolved (see WebhookSender).
 */
export function webhookUrlProblem(text: string, allowHttp: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url must be an absolute URL such as https://receiver.example.com/hooks';
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    return allowHttp ? 'url must use https or http' : 'url must use https';
  }
  if (url.username !== '' || url.password !== '') {
    return 'url must not contain a user name or password';
  }
  if (url.hash !== '') return 'url must not contain a fragment (#…)';
  if (url.href.length > 2048) return 'url must be at most 2048 characters long';
  return undefined;
}
