import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

/** The files whose classes run SQL: every repository, and the outbox's part of a create. */
function queryFiles(root: string): string[] {
  const src = join(root, 'src');
  return readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.repository.ts') || path.endsWith('.outbox.ts'))
    .map((path) => join(src, path))
    .sort();
}

/** The exported classes of a file and their public instance methods, read from its source. */
function publicMethods(file: string): Map<string, string[]> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const classes = new Map<string, string[]>();
  for (const statement of source.statements) {
    if (!ts.isClassDeclaration(statement) || !statement.name) continue;
    const modifiers = ts.getModifiers(statement) ?? [];
    if (!modifiers.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    const hidden = [
      ts.SyntaxKind.PrivateKeyword,
      ts.SyntaxKind.ProtectedKeyword,
      ts.SyntaxKind.StaticKeyword,
    ];
    const methods = statement.members
      .filter(ts.isMethodDeclaration)
      .filter((member) => !(ts.getModifiers(member) ?? []).some((m) => hidden.includes(m.kind)))
      .filter((member) => ts.isIdentifier(member.name))
      .map((member) => (member.name as ts.Identifier).text);
    classes.set(statement.name.text, methods);
  }
  return classes;
}

/** A class that runs SQL, as imported, with its public methods (`Class.method`). */
export interface QueryClass {
  file: string;
  type: abstract new (...args: never[]) => object;
  methods: string[];
}

export async function queryClasses(root: string): Promise<QueryClass[]> {
  const found: QueryClass[] = [];
  for (const file of queryFiles(root)) {
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    for (const [name, methods] of publicMethods(file)) {
      found.push({
        file: relative(root, file),
        type: module[name] as QueryClass['type'],
        methods: methods.map((method) => `${name}.${method}`),
      });
    }
  }
  return found;
}

/**
 * Wraps every public method of `instance` (the app's own, so that its callers
 * go through the wrapper too) to note `Class.method` in `called` while
 * `recording()` says so.
 */
export function recordCalls(
  instance: object,
  methods: readonly string[],
  recording: () => boolean,
  called: Set<string>,
): void {
  const target = instance as Record<string, unknown>;
  for (const qualified of methods) {
    const name = qualified.slice(qualified.indexOf('.') + 1);
    const original = target[name] as (...args: unknown[]) => unknown;
    target[name] = function (this: unknown, ...args: unknown[]) {
      if (recording()) called.add(qualified);
      return original.apply(this, args);
    };
  }
}
