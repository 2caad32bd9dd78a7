/**
 * Where a callgrind count goes, by source file: `npm run bench:instructions -- --by-file`.
 *
 * The server runs with `--perf-basic-prof --interpreted-frames-native-stack`, so V8 writes a map
 * of the code it compiles (`/tmp/perf-<pid>.map`: start, size, `JS:*name url:line:column`), and
 * callgrind names that code only by its address. Each function's own instructions (callgrind's
 * self cost) are charged to the source file the map and, for the bundle, its source map name; a
 * builtin, a regular expression or the runtime's C++ has no file, so its instructions are charged
 * to its callers, in proportion to what each call cost (callgrind's call edges), until a caller
 * with a file is reached. What no caller with a file reaches (the event loop, the collector's
 * work on the main thread) stays `[native]`. Every instruction of the count is charged once.
 *
 * Callgrind keeps each function apart per chain of its last CALLER_CONTEXT callers
 * (`--separate-callers`; named `function'caller'caller's caller…`): the split then follows the
 * chain a call came by, not over every caller of a shared builtin (an API call's, a runtime
 * call's) alike. Without it, a list's `node:internal/process` (the microtask queue) was 64.5
 * thousand instructions, `node:buffer` 23.4 and `[native]` 60.9; with it, 30.1, 60.8 and 35.0.
 *
 * Code that V8's optimizing compiler inlines runs as part of its caller's code, and is charged to
 * the caller's file: node-postgres's row handler inlined into EventEmitter's `emit` counts as
 * `node:events`, so two servers that do the same work can split it over different rows. Compare
 * rows that go together (pg, pg-protocol and node:events; a cursor's file and node:crypto).
 */
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { resolve } from 'node:path';

/** One compiled function of V8's perf map. */
interface CodeRange {
  start: number;
  end: number;
  name: string;
}

/** Instructions per function of one callgrind dump, and per call edge (callee, then caller). */
export interface CallgrindProfile {
  total: number;
  self: Map<string, number>;
  callers: Map<string, Map<string, number>>;
}

/** The ranges of V8's perf map, in address order. */
export function readPerfMap(text: string): CodeRange[] {
  const ranges: CodeRange[] = [];
  for (const line of text.split('\n')) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.+)$/.exec(line);
    if (!match) continue;
    const start = parseInt(match[1], 16);
    ranges.push({ start, end: start + parseInt(match[2], 16), name: match[3] });
  }
  return ranges.sort((a, b) => a.start - b.start);
}

/** How many callers up callgrind keeps a function's calls apart (`--separate-callers`). */
export const CALLER_CONTEXT = 5;

/** Callgrind's name of a function in a caller context: the function, then its callers, by `'`. */
const CONTEXT_SEPARATOR = "'";

/** The name of each part of callgrind's `0x…'0x…` name, as `codeAt` gives it. */
function codeName(ranges: CodeRange[], name: string): string {
  return name
    .split(CONTEXT_SEPARATOR)
    .map((part) => codeAt(ranges, part))
    .join(CONTEXT_SEPARATOR);
}

/** The perf map's name of the code at callgrind's `0x…` address, else the name as it is. */
function codeAt(ranges: CodeRange[], name: string): string {
  if (!/^0x[0-9a-f]+$/.test(name)) return name;
  const address = parseInt(name.slice(2), 16);
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (ranges[middle].start <= address) low = middle + 1;
    else high = middle - 1;
  }
  const range = ranges[high];
  return range && address < range.end ? range.name : '[compiled code]';
}

/**
 * Reads a callgrind dump (one event, Ir): `fn=` starts a function's lines, a `calls=` line says
 * that the cost line after it is a call's inclusive cost, to the `cfn=` before it; any other cost
 * line is the function's own. Names are compressed as `(id) name` once, then `(id)`.
 */
export function parseCallgrind(text: string, ranges: CodeRange[]): CallgrindProfile {
  const names = new Map<string, string>();
  const nameOf = (field: string): string => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(field);
    if (!match) return codeName(ranges, field);
    if (match[2] !== undefined) names.set(match[1], codeName(ranges, match[2]));
    return names.get(match[1]) ?? `(${match[1]})`;
  };
  const profile: CallgrindProfile = { total: 0, self: new Map(), callers: new Map() };
  let fn: string | undefined;
  let callee: string | undefined;
  let call = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) fn = nameOf(line.slice(3));
    else if (line.startsWith('cfn=')) callee = nameOf(line.slice(4));
    else if (line.startsWith('calls=')) call = true;
    else if (fn !== undefined && /^[+\-*0-9]/.test(line)) {
      const cost = Number(line.trim().split(/\s+/)[1] ?? 0);
      if (!call) {
        profile.self.set(fn, (profile.self.get(fn) ?? 0) + cost);
        profile.total += cost;
      } else if (callee !== undefined && callee !== fn) {
        const callers = profile.callers.get(callee) ?? new Map<string, number>();
        callers.set(fn, (callers.get(fn) ?? 0) + cost);
        profile.callers.set(callee, callers);
      }
      call = false;
    }
  }
  return profile;
}

/**
 * The group a function's source file falls in: the service's own files by path (`src/…`), a
 * package by its name, Node's own modules by their first two path parts; undefined for code
 * with no file (builtins, the runtime, regular expressions). Of the function itself, whatever
 * its callers.
 */
export function sourceGroup(name: string, sourceMaps: Map<string, SourceMap>): string | undefined {
  const [own] = name.split(CONTEXT_SEPARATOR);
  const match = /^JS:\S* (.+):(\d+):(\d+)$/.exec(own);
  if (!match) return undefined;
  let file = match[1].replace(/^file:\/\//, '');
  const map = sourceMaps.get(file);
  if (map) {
    const entry = map.findEntry(Number(match[2]) - 1, Number(match[3]) - 1) as {
      originalSource?: string;
    };
    if (entry.originalSource) file = entry.originalSource;
  }
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
  if (inPackage) return inPackage[1];
  if (file.startsWith('node:')) return file.split('/').slice(0, 2).join('/');
  // The bundle's sources are the build's files, named relative to dist/bundle (../plants/…).
  const built = /^(?:\.\.\/)+(.*)$/.exec(file)?.[1] ?? /\/dist\/(.*)$/.exec(file)?.[1];
  if (built === undefined) return file;
  return `${built.startsWith('bench/') ? '' : 'src/'}${built.replace(/\.js$/, '.ts')}`;
}

/**
 * Instructions per source group: each function's own, and what runs without a file charged to
 * its callers in proportion to the call edges, up the calls until a caller has a file. Each
 * function's split over the groups is worked out once; a caller already being worked out (a
 * cycle of functions without a file) takes its share as `[native]`. Sums to the total.
 */
export function chargeToSources(
  profile: CallgrindProfile,
  groupOf: (name: string) => string | undefined,
): Map<string, number> {
  const splits = new Map<string, Map<string, number>>();
  const NATIVE = new Map([['[native]', 1]]);
  const splitOf = (fn: string): Map<string, number> => {
    const group = groupOf(fn);
    if (group !== undefined) return new Map([[group, 1]]);
    const known = splits.get(fn);
    if (known) return known;
    splits.set(fn, NATIVE);
    const callers = [...(profile.callers.get(fn) ?? [])];
    const sum = callers.reduce((total, [, edge]) => total + edge, 0);
    if (sum === 0) return NATIVE;
    const split = new Map<string, number>();
    for (const [caller, edge] of callers) {
      for (const [callerGroup, share] of splitOf(caller)) {
        split.set(callerGroup, (split.get(callerGroup) ?? 0) + (share * edge) / sum);
      }
    }
    splits.set(fn, split);
    return split;
  };
  const charged = new Map<string, number>();
  for (const [fn, cost] of profile.self) {
    for (const [group, share] of splitOf(fn)) {
      charged.set(group, (charged.get(group) ?? 0) + cost * share);
    }
  }
  return charged;
}

/** The source map beside a script (a bundle's `.map`), by the script's absolute path; none without one. */
export function sourceMapOf(script: string): Map<string, SourceMap> {
  try {
    const payload = JSON.parse(readFileSync(`${script}.map`, 'utf8')) as SourceMapPayload;
    return new Map([[resolve(script), new SourceMap(payload)]]);
  } catch {
    // No map beside it: its functions are named by the script's own path.
    return new Map();
  }
}

/**
 * Removes the perf maps written since `since` (ms) by processes that have ended: the counted
 * server's, and that of the run that fills its compile cache (processes.ts) with the same flags.
 */
export function removeEndedPerfMaps(since: number): void {
  for (const name of readdirSync('/tmp')) {
    const pid = /^perf-(\d+)\.map$/.exec(name)?.[1];
    if (pid === undefined) continue;
    const path = `/tmp/${name}`;
    const written = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
    if (written === undefined || written < since) continue;
    if (!running(Number(pid))) rmSync(path, { force: true });
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
