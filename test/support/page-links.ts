import type { Response } from 'supertest';
import { expect } from 'vitest';
import type { TestApp } from './test-app.js';

/** The target of a response's RFC 8288 rel="next" link, or undefined when it has none. */
export function nextLinkOf(response: Response): string | undefined {
  const link = response.headers.link as string | undefined;
  if (link === undefined) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(link);
  expect(match, `a Link header with one rel="next" target: ${link}`).not.toBeNull();
  return match![1];
}

/** The cursor (`after`) of a response's next link. */
export function cursorOf(response: Response): string {
  const next = nextLinkOf(response);
  expect(next).toBeDefined();
  return new URL(next!, 'http://service').searchParams.get('after')!;
}

/**
 * Follows next links from `first` until a page has none, calling `between`
 * after each page (to change data under the walk); the bodies of every page,
 * in order.
 */
export async function walkPages(
  t: TestApp,
  auth: string,
  first: string,
  between: (page: number) => Promise<void> = async () => {},
): Promise<unknown[][]> {
  const pages: unknown[][] = [];
  let url: string | undefined = first;
  while (url !== undefined) {
    const response = await t.http().get(url).set('Authorization', auth);
    expect(response.status, `${url}: ${response.text}`).toBe(200);
    pages.push(response.body as unknown[]);
    url = nextLinkOf(response);
    await between(pages.length);
  }
  return pages;
}
