// The production artefact: dist/main.js (what `nest build` compiled) and the
// application packages it imports, bundled into one file, dist/bundle/main.js,
// which the container, `npm run start:prod`, the e2e tests that run the built
// service and the bench all start. Part of `npm run build`.
//
// Why: unbundled, Node resolves, reads and compiles about 2,500 module files
// at start-up (counted with a loader hook); one file starts in about half the
// CPU time and, minified, takes less memory (BENCHMARKS.md, "Start-up and RSS"):
// what an autoscaled instance pays before it can answer.
//
// What stays outside the bundle, loaded from node_modules as before:
// - the packages OpenTelemetry patches as they load (pg, pino, fastify,
//   better-sqlite3, and the OpenTelemetry API itself, so that the tracing
//   preload and the application share one copy): a bundled copy would never be
//   patched and tracing would lose its per-query spans;
// - packages that find files next to themselves at run time (swagger-ui-dist,
//   @fastify/static);
// - what the service never loads but its libraries name for other set-ups
//   (Express, Nest's microservices and websockets, multer, file-type).
// The migrations job and the token command line stay unbundled: they are run
// once, not scaled.
import { build } from 'rolldown';

const OUTSIDE = [
  'pg',
  'pg-pool',
  'pino',
  'fastify',
  'better-sqlite3',
  'better-sqlite3-napi',
  '@opentelemetry/api',
  'swagger-ui-dist',
  '@fastify/static',
  '@nestjs/platform-express',
  'express',
  'body-parser',
  'multer',
  'file-type',
  '@nestjs/microservices',
  '@nestjs/websockets',
  // Optional plugins @nestjs/platform-fastify imports only when asked to (not installed).
  '@fastify/multipart',
  '@fastify/view',
];

/** @param {string} id */
const outside = (id) => OUTSIDE.some((name) => id === name || id.startsWith(`${name}/`));

await build({
  input: { main: 'dist/main.js' },
  platform: 'node',
  external: outside,
  // Any warning (an import that does not resolve, an eval) fails the build:
  // the bundle must behave as the unbundled build does.
  onLog(level, log) {
    throw new Error(`bundling dist/main.js: ${level} ${log.code ?? ''}: ${log.message}`);
  },
  output: {
    dir: 'dist/bundle',
    format: 'esm',
    codeSplitting: false,
    sourcemap: true,
    // Nest, TypeORM and class-validator read class and function names at run
    // time (entity and provider names, log contexts): minified, but named.
    keepNames: true,
    minify: {
      compress: { keepNames: { function: true, class: true } },
      mangle: { keepNames: true },
      codegen: { removeWhitespace: true },
    },
    // V8 keeps a module's source for lazy compilation: ASCII keeps it one byte
    // a character (any other character makes the whole string two bytes).
    charset: 'ascii',
    comments: { legal: false },
    // The CommonJS packages in the bundle call require(); an ES module has none.
    banner:
      "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
});
