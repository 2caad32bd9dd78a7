/**
 * The little of the shell that the docs' examples use, read as a reader's
 * shell would: commands (with `\` continuations and quotes spanning lines),
 * `NAME=value` prefixes and assignments, `$NAME`, `$(command)`, a trailing `&`
 * and `#` comments. Anything else (pipes, redirections, `&&`, `;`) is refused,
 * so that an example the test cannot run is marked in the markdown instead of
 * run wrongly.
 */

/** What an example shows as the answer of a command. */
interface ShownAnswer {
  /** The status the example shows (`# 201 {…}`), if it shows one. */
  status?: number;
  /** The output shown, with `…` and placeholders (see answerPattern). */
  output: string;
}

/** One command of an example, as written. */
export interface ExampleCommand {
  /** Its text, continuations and all (substitutions are made on it before it is parsed). */
  source: string;
  /** Its line in the fence, 0-based. */
  line: number;
  shown?: ShownAnswer;
}

/** A part of a word: literal text, `$NAME`, or `$(command)`. */
type Part = { text: string } | { variable: string } | { command: string };
export type Word = Part[];

export interface ParsedCommand {
  /** `NAME=value` before the command (its environment), or alone (an assignment). */
  assignments: Array<{ name: string; value: Word }>;
  argv: Word[];
  background: boolean;
}

export class UnsupportedShell extends Error {}

/**
 * The commands of a `bash`/`sh` fence. A comment line right after a command
 * that starts with a status (`# 201 {"id":…}`) is the answer it shows; comment
 * lines indented further (`#      "createdAt":…`) continue it. Other comment
 * lines are prose.
 */
export function scriptCommands(body: string): ExampleCommand[] {
  const commands: ExampleCommand[] = [];
  let source = '';
  let start = 0;
  let line = 0;
  let quote = '';
  let showing = false;
  const finish = () => {
    if (source.trim() !== '') commands.push({ source: source.trim(), line: start });
    source = '';
  };
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (source.trim() === '') start = line;
    if (c === '\n') line++;
    if (quote !== '') {
      if (c === '\\' && quote === '"') {
        source += c + (body[i + 1] ?? '');
        if (body[++i] === '\n') line++;
        continue;
      }
      if (c === quote) quote = '';
      source += c;
    } else if (c === '\\') {
      source += c + (body[i + 1] ?? '');
      if (body[++i] === '\n') line++;
    } else if (c === "'" || c === '"') {
      quote = c;
      source += c;
    } else if (c === '#' && source.trim() === '') {
      const end = body.indexOf('\n', i);
      const comment = body.slice(i, end < 0 ? body.length : end);
      i = (end < 0 ? body.length : end) - 1;
      const last = commands.at(-1);
      const status = /^#\s*(\d{3})\b\s*(.*)$/.exec(comment);
      if (last && !last.shown && status) {
        last.shown = { status: Number(status[1]), output: status[2] };
        showing = true;
      } else if (last?.shown && showing && /^#\s{2,}\S/.test(comment)) {
        last.shown.output += comment.replace(/^#\s*/, '');
      } else showing = false;
    } else if (c === '\n') {
      // A comment line keeps an answer going; a command ends it.
      if (source.trim() !== '') showing = false;
      finish();
    } else source += c;
  }
  if (quote !== '') throw new UnsupportedShell(`a quote is never closed in:\n${body}`);
  finish();
  return commands;
}

/** The commands of a `console` fence: `$ ` lines (and their continuations), each followed by its output. */
export function consoleCommands(body: string): ExampleCommand[] {
  const commands: ExampleCommand[] = [];
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('$ ')) {
      const last = commands.at(-1);
      if (!last) throw new UnsupportedShell(`output before any "$ " command: ${lines[i]}`);
      last.shown = { output: last.shown ? `${last.shown.output}\n${lines[i]}` : lines[i] };
      continue;
    }
    const start = i;
    let source = lines[i].slice(2);
    while (lines[i].endsWith('\\') && i + 1 < lines.length) source += `\n${lines[++i]}`;
    commands.push({ source, line: start });
  }
  for (const command of commands)
    if (command.shown) command.shown.output = command.shown.output.replace(/\s+$/, '');
  return commands;
}

/** Splits one command into words, as the shell would before expanding them. */
export function parseCommand(source: string): ParsedCommand {
  const words: Word[] = [];
  let word: Word | null = null;
  let background = false;
  let i = 0;
  const text = (s: string) => {
    word ??= [];
    const last = word.at(-1);
    if (last && 'text' in last) last.text += s;
    else word.push({ text: s });
  };
  const end = () => {
    if (word) words.push(word);
    word = null;
  };
  const dollar = () => {
    if (source[i + 1] === '(') {
      let depth = 1;
      let j = i + 2;
      for (; j < source.length && depth > 0; j++)
        depth += source[j] === '(' ? 1 : source[j] === ')' ? -1 : 0;
      if (depth > 0) throw new UnsupportedShell(`unclosed $( in ${source}`);
      (word ??= []).push({ command: source.slice(i + 2, j - 1) });
      i = j;
      return;
    }
    const name = /^\{([A-Za-z_]\w*)\}|^([A-Za-z_]\w*)/.exec(source.slice(i + 1));
    if (!name) {
      text('$');
      i++;
      return;
    }
    (word ??= []).push({ variable: name[1] ?? name[2] });
    i += 1 + name[0].length;
  };
  while (i < source.length) {
    const c = source[i];
    if (background && !/\s/.test(c)) throw new UnsupportedShell(`something after "&" in ${source}`);
    if (c === '\\') {
      if (source[i + 1] !== '\n') text(source[i + 1] ?? '');
      i += 2;
    } else if (c === "'") {
      const close = source.indexOf("'", i + 1);
      if (close < 0) throw new UnsupportedShell(`unclosed ' in ${source}`);
      text(source.slice(i + 1, close));
      i = close + 1;
    } else if (c === '"') {
      text('');
      for (i++; source[i] !== '"';) {
        if (i >= source.length) throw new UnsupportedShell(`unclosed " in ${source}`);
        if (source[i] === '\\' && '$`"\\\n'.includes(source[i + 1])) {
          if (source[i + 1] !== '\n') text(source[i + 1]);
          i += 2;
        } else if (source[i] === '$') dollar();
        else if (source[i] === '`') throw new UnsupportedShell(`backquotes in ${source}`);
        else text(source[i++]);
      }
      i++;
    } else if (c === '$') dollar();
    else if (/\s/.test(c)) {
      end();
      i++;
    } else if (c === '#' && word === null) break;
    else if (c === '&' && source[i + 1] !== '&') {
      end();
      background = true;
      i++;
    } else if ('&;|<>()`'.includes(c))
      throw new UnsupportedShell(`"${c}" (not supported by the docs test) in ${source}`);
    else {
      text(c);
      i++;
    }
  }
  end();
  const assignments: ParsedCommand['assignments'] = [];
  while (words.length > 0) {
    const [first, ...rest] = words[0];
    if (!first || !('text' in first)) break;
    const assignment = /^([A-Za-z_]\w*)=/.exec(first.text);
    if (!assignment) break;
    const value: Word = [{ text: first.text.slice(assignment[0].length) }, ...rest];
    assignments.push({ name: assignment[1], value: value.filter((p) => !('text' in p) || p.text) });
    words.shift();
  }
  return { assignments, argv: words, background };
}

/** Expands a word: variables from `lookup`, `$(…)` through `run` (its stdout, trailing newlines cut). */
export async function expand(
  word: Word,
  lookup: (name: string) => string,
  run: (command: string) => Promise<string>,
): Promise<string> {
  let value = '';
  for (const part of word) {
    if ('text' in part) value += part.text;
    else if ('variable' in part) value += lookup(part.variable);
    else value += (await run(part.command)).replace(/\n+$/, '');
  }
  return value;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * A regular expression (source, unanchored) for an answer an example shows:
 * `…` stands for anything on the line; `<subscription id>` for a value the
 * reader copies into a later command, and so does a `prefix_…` such as
 * `whsec_…`; an example API token (`pst_` and 43 characters) for any token.
 * `keys` names the captured groups in order.
 */
export function answerPattern(shown: string): { source: string; keys: string[] } {
  const keys: string[] = [];
  let source = '';
  let last = 0;
  for (const m of shown.matchAll(/<([a-z][a-z -]*)>|([A-Za-z0-9]+_)…|…|pst_[A-Za-z0-9_-]{43}/g)) {
    source += escape(shown.slice(last, m.index));
    if (m[1] !== undefined) {
      keys.push(m[0]);
      source += '([^"\\s]+?)';
    } else if (m[2] !== undefined) {
      keys.push(m[0]);
      source += `(${escape(m[2])}[^"\\s]*)`;
    } else if (m[0] === '…') source += '[^\\n]*?';
    else source += 'pst_[A-Za-z0-9_-]{43}';
    last = m.index + m[0].length;
  }
  return { source: source + escape(shown.slice(last)), keys };
}

/** Matches a whole answer against what an example shows; the values it captures, or null. */
export function matchAnswer(shown: string, actual: string): Map<string, string> | null {
  const { source, keys } = answerPattern(shown);
  const match = new RegExp(`^${source}$`).exec(actual.replace(/\s+$/, ''));
  if (!match) return null;
  return new Map(keys.map((key, n) => [key, match[n + 1]]));
}
