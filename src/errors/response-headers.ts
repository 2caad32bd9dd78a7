/** An exception that asks for headers on its error response (e.g. WWW-Authenticate). */
export interface WithResponseHeaders {
  responseHeaders(): Record<string, string>;
}

export function hasResponseHeaders(value: unknown): value is WithResponseHeaders {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<WithResponseHeaders>).responseHeaders === 'function'
  );
}
