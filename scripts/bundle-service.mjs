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

/**
 * @nestjs/typeorm 12 reads `Connection` and `AbstractRepository` (gone in
 * TypeORM 1) with a run-time `require('typeorm')` that no bundler can follow:
 * bundled, that require loads a second, unbundled TypeORM from node_modules
 * (about 300 files, 2.9 MB of source held in memory) beside the bundled one.
 * Its module is given the same two exports from the bundled TypeORM instead.
 * The build fails if the module no longer looks as this expects.
 */
const TYPEORM_COMPAT = /@nestjs\/typeorm\/dist\/common\/typeorm-compat\.js$/;
const typeormCompatFromBundle = {
  name: 'typeorm-compat-from-bundle',
  transform: {
    filter: { id: TYPEORM_COMPAT },
    /** @param {string} code */
    handler(code) {
      const exported = [...code.matchAll(/export const (\w+) = resolveTypeormExport\('(\w+)'\);/g)];
      if (!code.includes("require('typeorm')") || exported.length === 0) {
        throw new Error(
          '@nestjs/typeorm typeorm-compat.js changed: review scripts/bundle-service.mjs',
        );
      }
      const replacement = [
        "import * as typeorm from 'typeorm';",
        // Looked up by a computed name: TypeORM 1 has neither export.
        'const exportOf = (name) => typeorm[name];',
        ...exported.map(([, local, name]) => `export const ${local} = exportOf('${name}');`),
      ].join('\n');
      // A module written anew: no mapping back to the original lines.
      return { code: replacement, map: { mappings: '' } };
    },
  },
};

await build({
  input: { main: 'dist/main.js' },
  platform: 'node',
  external: outside,
  plugins: [typeormCompatFromBundle],
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
