/**
 * What each environment variable is, declared beside its rule in the
 * variables class of its part (src/environment.ts): the single source of the start-up error lines
 * (load-environment.ts) and of docs/CONFIGURATION.md
 * (configuration-reference.ts).
 */

/** The parts of the service a variable belongs to, in the reference's order. */
export const VARIABLE_GROUPS = [
  'Process',
  'HTTP server',
  'Database',
  'Tokens',
  'OpenID Connect',
  'Rate limits',
  'Health and metrics',
  'Webhooks',
] as const;
export type VariableGroup = (typeof VARIABLE_GROUPS)[number];

/** The type and the values a variable's rule allows (environment.decorators.ts records it). */
export interface VariableKind {
  /** One word for the reference's table: integer, boolean, enum, list, URL… */
  type: string;
  /** What a value may be, as a phrase: "an integer from 0 to 65535". */
  allowed: string;
}

interface VariableDoc {
  group: VariableGroup;
  /** What the variable does, in one or a few sentences. */
  meaning: string;
  /** Its value is never shown, in an error or anywhere else. */
  secret: boolean;
}

export type VariableDescription = VariableKind &
  VariableDoc & {
    name: string;
    /** The value when the variable is unset; undefined: unset means off or absent. */
    defaultValue: unknown;
  };

type Entry = Partial<VariableKind & VariableDoc>;
const entries = new WeakMap<object, Map<string, Entry>>();

function entry(target: object, property: string | symbol): Entry {
  const byName = entries.get(target) ?? new Map<string, Entry>();
  entries.set(target, byName);
  const name = String(property);
  const found = byName.get(name) ?? {};
  byName.set(name, found);
  return found;
}

export function recordVariable(
  target: object,
  property: string | symbol,
  kind: VariableKind,
): void {
  Object.assign(entry(target, property), kind);
}

/** Declares a variable's group and meaning; `secret` keeps its value out of every message. */
export const Variable =
  (group: VariableGroup, meaning: string, options: { secret?: boolean } = {}): PropertyDecorator =>
  (target, property) => {
    Object.assign(entry(target, property), { group, meaning, secret: options.secret ?? false });
  };

export function isSecretVariable(object: object, property: string): boolean {
  return entries.get(Object.getPrototypeOf(object) as object)?.get(property)?.secret === true;
}

/**
 * Every variable of the class `Environment`, in declaration order (the
 * properties of a new instance), with its default. Throws when one lacks its
 * `@Variable` or its rule: the reference and the errors need both.
 */
export function describeVariables(Environment: new () => object): VariableDescription[] {
  const defaults = new Environment() as Record<string, unknown>;
  const byName = entries.get(Environment.prototype as object);
  return Object.keys(defaults).map((name) => {
    const found = byName?.get(name);
    if (found?.group === undefined || found.type === undefined) {
      throw new Error(`${name} needs both @Variable(…) and a rule from environment.decorators.ts`);
    }
    return { ...(found as VariableKind & VariableDoc), name, defaultValue: defaults[name] };
  });
}
