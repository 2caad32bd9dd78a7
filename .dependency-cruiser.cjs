/**
 * The architecture of src/, checked in CI (`npm run lint:architecture`).
 *
 * Features are the folders that serve a part of the API: they may use shared
 * code, and another feature only through what that feature offers to others
 * (its module, its decorators, its ports, its variables). Shared folders serve every feature and know
 * none. Entry points and the app's composition (src/*.ts) may import anything.
 */
const FEATURES = ['auth', 'health', 'plants', 'rate-limit', 'webhooks'];
const SHARED = [
  'config',
  'database',
  'errors',
  'http',
  'lifecycle',
  'logging',
  'metrics',
  'openapi',
  'redis',
  'tracing',
  'validation',
];
const folders = (names) => `^src/(${names.join('|')})/`;

module.exports = {
  forbidden: [
    {
      name: 'every-folder-classified',
      severity: 'error',
      comment: 'A new folder of src/ is either a feature or shared: add it to one list above.',
      from: { path: '^src/[^/]+/', pathNot: [folders(FEATURES), folders(SHARED)] },
      to: {},
    },
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'An import cycle ties modules (and folders) together: break it.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'shared-knows-no-feature',
      severity: 'error',
      comment: 'Shared code serves every feature; it must not depend on one.',
      from: { path: folders(SHARED) },
      to: { path: folders(FEATURES) },
    },
    {
      name: 'no-feature-internals',
      severity: 'error',
      comment:
        'A feature uses another feature only through its module, decorators, ports (the interfaces it declares for others to provide) or variables (the settings it declares), never its services, repositories or entities.',
      from: { path: '^src/([^/]+)/' },
      to: {
        path: folders(FEATURES),
        pathNot: ['^src/$1/', '\\.(module|decorator|port|variables)\\.ts$'],
      },
    },
    {
      name: 'plants-knows-no-webhooks',
      severity: 'error',
      comment:
        'Plants announces a created plant through its port (src/plants/plant-created.port.ts), which webhooks provides: the arrow points from webhooks to plants, never back.',
      from: { path: '^src/plants/' },
      to: { path: '^src/webhooks/' },
    },
    {
      name: 'drivers-only-in-database',
      severity: 'error',
      comment:
        "Queries go through TypeORM's API; only src/database/ (connection, migrations) may load a database driver.",
      from: { path: '^src/', pathNot: ['^src/database/'] },
      to: { path: 'node_modules/(pg|pg-[^/]+|better-sqlite3|better-sqlite3-napi)/' },
    },
    {
      name: 'src-not-from-tests-or-bench',
      severity: 'error',
      comment: 'The service never imports test or bench code.',
      from: { path: '^src/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A file nothing imports is dead code (entry points and specs aside).',
      from: {
        orphan: true,
        pathNot: ['\\.spec\\.ts$', '^src/[^/]+\\.ts$', '\\.d\\.ts$'],
      },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
