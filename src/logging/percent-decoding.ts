/**
 * A spelling of a text with its percent-escapes decoded some number of times,
 * in which every character knows the span of the original text it came from:
 * what is found in the decoded text can then be cut out of the original.
 */
export interface DecodedView {
  text: string;
  /** Where, in the original, the span of each character of `text` starts; undefined: at its own index. */
  starts?: Int32Array;
  /** Where, in the original, the span of each character of `text` ends (exclusive); undefined: one after its index. */
  ends?: Int32Array;
}

/** Where, in the original, the span of the view's character `i` starts. */
export const startOf = (view: DecodedView, i: number): number => view.starts?.[i] ?? i;

/** Where, in the original, the span of the view's character `i` ends (exclusive). */
export const endOf = (view: DecodedView, i: number): number => view.ends?.[i] ?? i + 1;

/**
 * How many times a text is decoded at most. Each decoding of an escaped
 * escape (`%255F`) peels one level off; a decoding that changes nothing ends
 * the series sooner. Bounded so that a URL of nested escapes costs at most
 * this many passes over it.
 */
export const MAX_DECODINGS = 4;

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/**
 * The view with every `%XX` (either case of hex digit) decoded once, to the
 * character of that byte's code (bytes above 0x7F stay one character each:
 * nothing searched for is outside ASCII); undefined when there is none.
 */
function decodedOnce(view: DecodedView): DecodedView | undefined {
  const { text } = view;
  if (!text.includes('%')) return undefined;
  const codes = new Uint16Array(text.length);
  const starts = new Int32Array(text.length);
  const ends = new Int32Array(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++, length++) {
    const high = text.charCodeAt(i) === 0x25 ? hexValue(text.charCodeAt(i + 1)) : -1;
    const low = high >= 0 ? hexValue(text.charCodeAt(i + 2)) : -1;
    starts[length] = startOf(view, i);
    if (low >= 0) {
      codes[length] = high * 16 + low;
      i += 2;
    } else {
      codes[length] = text.charCodeAt(i);
    }
    ends[length] = endOf(view, i);
  }
  if (length === text.length) return undefined;
  let decoded = '';
  // In slices: String.fromCharCode takes its codes as arguments, and arguments are bounded.
  for (let i = 0; i < length; i += 4096) {
    decoded += String.fromCharCode(...codes.subarray(i, Math.min(i + 4096, length)));
  }
  return {
    text: decoded,
    starts: starts.subarray(0, length),
    ends: ends.subarray(0, length),
  };
}

/** The text as it is, then decoded once, twice, … until nothing changes (MAX_DECODINGS at most). */
export function decodedViews(text: string): DecodedView[] {
  const views: DecodedView[] = [{ text }];
  for (let i = 0; i < MAX_DECODINGS; i++) {
    const next = decodedOnce(views[views.length - 1]);
    if (next === undefined) break;
    views.push(next);
  }
  return views;
}

/** The text decoded as decodedViews decodes it, as far as it goes. */
export function fullyDecoded(text: string): string {
  const views = decodedViews(text);
  return views[views.length - 1].text;
}
