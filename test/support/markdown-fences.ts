import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/** A fenced code block of a markdown file, as a reader meets it. */
export interface Fence {
  /** The file, relative to the repository (`docs/WEBHOOKS.md`). */
  file: string;
  /** The line of the opening fence, 1-based. */
  line: number;
  /** The info string's first word (`bash`, `console`, `js`), or '' for a bare fence. */
  lang: string;
  /** The lines between the fences, without the fence's own indentation. */
  body: string;
  /** The paragraph just before the fence (the sentence that introduces the example). */
  lead: string;
  /** Set when `<!-- not run by test: <reason> -->` is the last line before the fence. */
  notRun?: string;
}

const OPENING = /^( *)(`{3,}|~{3,})\s*([^\s`]*)/;
const NOT_RUN = /^<!--\s*not run by test:\s*(.+?)\s*-->$/;

/** Every fenced block of one markdown file, in order. */
export function fencesOf(file: string, text: string): Fence[] {
  const lines = text.split('\n');
  const fences: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPENING.exec(lines[i]);
    if (!open) continue;
    const [, indent, marker, lang] = open;
    let end = i + 1;
    while (end < lines.length && !lines[end].trim().startsWith(marker)) end++;
    if (end === lines.length) throw new Error(`${file}:${i + 1}: the fence is never closed`);
    const body = lines
      .slice(i + 1, end)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()))
      .join('\n');
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === '') before--;
    const notRun = before >= 0 ? NOT_RUN.exec(lines[before].trim())?.[1] : undefined;
    if (notRun) before--;
    while (before >= 0 && lines[before].trim() === '') before--;
    let start = before;
    while (start > 0 && lines[start - 1].trim() !== '') start--;
    const lead = before >= 0 ? lines.slice(start, before + 1).join('\n') : '';
    fences.push({ file, line: i + 1, lang, body, lead, notRun });
    i = end;
  }
  return fences;
}

/**
 * The markdown files the README links, in the order it first links them,
 * relative to the repository (`docs/API.md`, `SECURITY.md`).
 */
export function linkedMarkdown(readmePath: string): string[] {
  const readme = readFileSync(readmePath, 'utf8');
  const files: string[] = [];
  for (const [, target] of readme.matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)) {
    if (/^[a-z]+:/.test(target)) continue;
    const file = normalize(join(dirname(readmePath), target));
    if (!files.includes(file)) files.push(file);
  }
  return files;
}
