import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expand, parseCommand, UnsupportedShell } from './doc-shell.js';
import { freePort } from '../../bench/support/free-port.js';
import {
  type ExitResult,
  runToExit,
  startService,
  type ServiceProcess,
} from './service-process.js';

const REPO = resolve('.');
const TOKEN_CLI = join(REPO, 'dist/token.main.js');

/** What one command of an example did. */
export interface CommandResult extends ExitResult {
  /** For curl: the status of the (last) response. */
  status?: number;
}

/** A process an example leaves running (a receiver), with what it printed so far. */
export interface BackgroundProcess {
  argv: string[];
  child: ChildProcess;
  output(): string;
  /** Resolves once its output matches `pattern`; rejects if it exits first. */
  printed(pattern: RegExp): Promise<void>;
}

/**
 * Reports on stderr when a server of the process listens: how the test knows
 * that a receiver started by an example is ready, without waiting blindly.
 */
const LISTENING_PRELOAD = `data:text/javascript,${encodeURIComponent(
  "import net from 'node:net';" +
    'const listen = net.Server.prototype.listen;' +
    'net.Server.prototype.listen = function (...args) {' +
    "  this.once('listening', () => process.stderr.write('[docs-examples] listening\\n'));" +
    '  return listen.apply(this, args);' +
    '};',
)}`;

function background(child: ChildProcess, argv: string[]): BackgroundProcess & { stdout(): string } {
  let output = '';
  let stdout = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  return {
    argv,
    child,
    output: () => output,
    stdout: () => stdout,
    printed: (pattern) =>
      new Promise((done, fail) => {
        const check = () => {
          if (!pattern.test(output)) return;
          listeners.delete(check);
          child.off('exit', exited);
          done();
        };
        const exited = () =>
          fail(new Error(`${argv.join(' ')} exited before printing ${pattern}:\n${output}`));
        listeners.add(check);
        child.once('exit', exited);
        check();
      }),
  };
}

/**
 * A newcomer's terminal in a fresh project folder: the service started as
 * `npm start` would (the built one, on a fresh SQLite file in that folder), the
 * shell variables the examples set, the values the reader copies from one
 * answer into a later command, and the receivers the examples leave running.
 * Examples name `127.0.0.1:3000` and fixed ports of their own; each is moved to
 * the service's port or to a free one.
 */
export class DocReader {
  readonly variables = new Map<string, string>();
  /** Values copied from answers: `<subscription id>`, `whsec_…`, `<token-id>`. */
  readonly copied = new Map<string, string>();
  readonly processes: BackgroundProcess[] = [];
  service!: ServiceProcess;
  private readonly ports = new Map<string, number>();
  private readonly env: Record<string, string>;

  constructor(readonly dir: string) {
    symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
    this.env = { PATH: process.env.PATH ?? '', HOME: dir, NO_COLOR: '1' };
  }

  /** Starts the service as `npm start` does, with `env` on top; stops the one running first. */
  async startService(env: Record<string, string> = {}): Promise<void> {
    await this.stopService();
    this.service = await startService(this.dir, env);
  }

  async stopService(): Promise<void> {
    const child = this.service?.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGINT'); // Ctrl-C in the terminal that ran npm start
    await exited;
  }

  async close(): Promise<void> {
    for (const { child } of this.processes)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await this.stopService();
  }

  /** The service's URL, the example's `http://127.0.0.1:3000`. */
  get url(): string {
    return this.service.url;
  }

  /** Moves the ports an example names (`127.0.0.1:9000`, `.listen(9000`) to this run's. */
  async localize(text: string): Promise<string> {
    const servicePort = new URL(this.url).port;
    for (const [, port] of text.matchAll(/(?:127\.0\.0\.1:|\.listen\()(\d{2,5})\b/g))
      if (port !== '3000' && !this.ports.has(port)) this.ports.set(port, await freePort());
    return text.replace(
      /(127\.0\.0\.1:|\.listen\()(\d{2,5})\b/g,
      (_, before: string, port: string) =>
        `${before}${port === '3000' ? servicePort : this.ports.get(port)}`,
    );
  }

  /** Puts in the values the reader copies (`<subscription id>`, `'whsec_…'`). */
  fillIn(source: string): string {
    let filled = source;
    for (const [shown, value] of this.copied) filled = filled.split(shown).join(value);
    return filled;
  }

  /** Runs one command of an example (its ports localized, its copied values filled in). */
  async run(source: string): Promise<CommandResult> {
    const parsed = parseCommand(this.fillIn(source));
    const lookup = (name: string) => {
      const value = this.variables.get(name);
      if (value === undefined) throw new Error(`$${name} is used before an example sets it`);
      return value;
    };
    const substitute = async (inner: string) => {
      const result = await this.run(inner);
      if (result.code !== 0) throw new Error(`$(${inner}) failed:\n${result.stderr}`);
      return result.stdout;
    };
    const env: Record<string, string> = {};
    for (const { name, value } of parsed.assignments)
      env[name] = await expand(value, lookup, substitute);
    const argv: string[] = [];
    for (const word of parsed.argv) argv.push(await expand(word, lookup, substitute));
    if (argv.length === 0) {
      for (const [name, value] of Object.entries(env)) this.variables.set(name, value);
      return { argv, code: 0, stdout: '', stderr: '' };
    }
    if (parsed.background && argv[0] !== 'node')
      throw new UnsupportedShell(`only node runs in the background here: ${source}`);
    return this.command(argv, env);
  }

  private async command(argv: string[], env: Record<string, string>): Promise<CommandResult> {
    const [program, ...args] = argv;
    const words = args.join(' ');
    if (program === 'curl') return this.curl(args, env);
    if (program === 'npm' && /^run -s token --( |$)/.test(words))
      return this.token(args.slice(4), env);
    if (program === 'npm' && (words === 'start' || words === 'run start:prod')) {
      await this.startService(env);
      return { argv, code: 0, stdout: '', stderr: '' };
    }
    if (program === 'npm' && args[0] === 'install' && args.length > 1) return this.install(args);
    if (program === 'npx' && existsSync(join(REPO, 'node_modules/.bin', args[0] ?? '')))
      return runToExit(join(REPO, 'node_modules/.bin', args[0]), args.slice(1), this.dir, {
        ...this.env,
        ...env,
      });
    if (program === 'node') return this.node(args, env);
    throw new UnsupportedShell(`${argv.join(' ')}: not a command the docs test runs`);
  }

  /** curl itself, its headers also dumped to a file for the status. */
  private async curl(args: string[], env: Record<string, string>): Promise<CommandResult> {
    const headers = join(this.dir, '.curl-headers');
    rmSync(headers, { force: true });
    const result = await runToExit('curl', [...args, '--dump-header', headers], this.dir, {
      ...this.env,
      ...env,
    });
    const dumped = existsSync(headers) ? readFileSync(headers, 'utf8') : '';
    const statuses = [...dumped.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)];
    return {
      ...result,
      argv: ['curl', ...args],
      status: statuses.length ? Number(statuses.at(-1)![1]) : undefined,
    };
  }

  /**
   * `npm run -s token -- …` is `node dist/token.main.js …` in the project
   * folder. A usage synopsis's optional `[--label laptop]` is given, and a
   * repeatable option (`...`) once. The id a create reports is what the reader
   * copies as `<token-id>`.
   */
  private async token(args: string[], env: Record<string, string>): Promise<CommandResult> {
    const given = args.map((arg) => arg.replace(/^\[/, '').replace(/\](\.\.\.)?$/, ''));
    const result = await runToExit(process.execPath, [TOKEN_CLI, ...given], this.dir, {
      ...this.env,
      ...env,
    });
    const id = /Token ([0-9a-f-]{36}) issued/.exec(result.stderr);
    if (id) this.copied.set('<token-id>', id[1]);
    return { ...result, argv: ['npm', 'run', '-s', 'token', '--', ...given] };
  }

  /** `npm install <package>`: a package of the project's own, already in node_modules. */
  private async install(args: string[]): Promise<CommandResult> {
    const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
    const known = { ...manifest.dependencies, ...manifest.devDependencies };
    const missing = args.slice(1).filter((name) => !(name in known));
    if (missing.length > 0)
      throw new UnsupportedShell(`npm install ${missing.join(' ')}: not a package of the project`);
    return { argv: ['npm', ...args], code: 0, stdout: '', stderr: '' };
  }

  /**
   * A node program: a server (a receiver) keeps running in the background once
   * it listens; any other program runs to its end.
   */
  private async node(args: string[], env: Record<string, string>): Promise<CommandResult> {
    const child = spawn(process.execPath, [`--import=${LISTENING_PRELOAD}`, ...args], {
      cwd: this.dir,
      env: { ...this.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const argv = ['node', ...args];
    const running = background(child, argv);
    const closed = new Promise<number | null>((done) => child.once('close', done));
    const listening = await running.printed(/\[docs-examples\] listening\n/).then(
      () => true,
      () => false,
    );
    if (listening) {
      this.processes.push(running);
      return { argv, code: 0, stdout: '', stderr: '' };
    }
    const code = await closed;
    return { argv, code, stdout: running.stdout(), stderr: running.output() };
  }
}
