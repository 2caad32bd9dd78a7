import { Environment } from './environment.js';
import {
  describeVariables,
  VARIABLE_GROUPS,
  type VariableDescription,
} from './variable-metadata.js';

/** Where `npm run config:docs` writes the reference, and where the check reads it. */
export const CONFIGURATION_REFERENCE_PATH = 'docs/CONFIGURATION.md';

const WIDTH = 100;

const INTRO = `# Configuration

<!-- Generated from src/config/environment.ts by \`npm run config:docs\`: edit that file, not this one. -->

The service takes its settings from environment variables, read and checked once at start-up by
src/config/. It also reads a \`.env\` file in its working directory, if there is one (\`.env.example\`
is a template); a variable set in the real environment wins over the file. Every variable may be
left unset, and then takes its default; only \`AUTH_JWT_AUDIENCE\` is required, once
\`AUTH_JWT_ISSUER\` is set, and \`CURSOR_SECRET\`, in production, by an instance that serves the
API.

A value a variable does not allow stops start-up: the service writes one line per bad variable,
naming the variable, what is wrong with the value and what is allowed, then exits with code 1:

    PORT: "abc" is not a whole number; allowed: an integer from 0 to 65535

On a terminal these are plain lines; otherwise (a container, a log collector) each one is a JSON
log line at level \`fatal\` with the variable's name in \`variable\`. The value of a secret variable
is never shown. A variable the service does not know is ignored.

Tracing is configured with OpenTelemetry's own \`OTEL_*\` variables, which its SDK reads as
OpenTelemetry documents them; they are not listed here.
`;

/** A default as the table shows it. */
function formatDefault(value: unknown): string {
  if (value === undefined) return 'unset';
  if (Array.isArray(value)) return value.length === 0 ? 'empty' : `\`${value.join(',')}\``;
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

/**
 * Prose for Markdown: variable names as code, and `<…>` kept as text rather
 * than HTML; code spans (between backticks) stay as they are.
 */
function prose(text: string, names: ReadonlySet<string>): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.startsWith('`')
        ? part
        : part
            .replace(/[<>]/g, (sign) => `\\${sign}`)
            .replace(/\b[A-Z][A-Z0-9_]+\b/g, (word) => (names.has(word) ? `\`${word}\`` : word)),
    )
    .join('');
}

/**
 * Breaks text into lines of at most WIDTH characters (a longer word or code
 * span stays whole), never starting a continuation line with a sign that Markdown would
 * read as a list, heading, quote or table.
 */
function wrap(text: string, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.match(/(?:`[^`]*`|[^\s`])+/g) ?? []) {
    const continues = /^([-+*#>|=]|\d+[.)])/.test(word);
    if (line !== '' && line.length + 1 + word.length > WIDTH && !continues) {
      lines.push(line);
      line = indent + word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.join('\n');
}

/** A Markdown table with its columns padded, as Prettier lays them out. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) =>
    Math.max(3, title.length, ...rows.map((row) => row[column].length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join(
    '\n',
  );
}

function section(
  group: string,
  variables: VariableDescription[],
  names: ReadonlySet<string>,
): string {
  const rows = variables.map((v) => [
    `\`${v.name}\``,
    v.secret ? `${v.type}, secret` : v.type,
    formatDefault(v.defaultValue),
  ]);
  const meanings = variables.map((v) =>
    wrap(`- \`${v.name}\`: ${prose(v.meaning, names)} Allowed: ${prose(v.allowed, names)}.`, '  '),
  );
  return [`## ${group}`, table(['Variable', 'Type', 'Default'], rows), meanings.join('\n')].join(
    '\n\n',
  );
}

/** docs/CONFIGURATION.md: every variable of Environment, by group, from its declaration. */
export function renderConfigurationReference(): string {
  const variables = describeVariables(Environment);
  const names = new Set(variables.map((v) => v.name));
  const sections = VARIABLE_GROUPS.flatMap((group) => {
    const inGroup = variables.filter((v) => v.group === group);
    return inGroup.length === 0 ? [] : [section(group, inGroup, names)];
  });
  return `${[INTRO.trimEnd(), ...sections].join('\n\n')}\n`;
}
