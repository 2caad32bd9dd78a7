import ts from 'typescript';
import { defineConfig, type Plugin } from 'vitest/config';

/**
 * Compiles the TypeScript under test with TypeScript itself. Vite's own
 * transform (Oxc) emits no decorator metadata, which Nest's dependency
 * injection reads; per-file transpilation keeps the emit the same as
 * `nest build` for everything the tests exercise.
 */
function typescriptWithDecoratorMetadata(): Plugin {
  const compilerOptions: ts.CompilerOptions = {
    module: ts.ModuleKind.ESNext,
    target: ts.ScriptTarget.ES2022,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    useDefineForClassFields: false,
    sourceMap: true,
    inlineSources: true,
  };
  return {
    name: 'typescript-decorator-metadata',
    enforce: 'pre',
    transform(code, id) {
      if (!id.endsWith('.ts') || id.includes('/node_modules/')) return null;
      const { outputText, sourceMapText } = ts.transpileModule(code, {
        fileName: id,
        compilerOptions,
      });
      return { code: outputText, map: sourceMapText };
    },
  };
}

export default defineConfig({
  plugins: [typescriptWithDecoratorMetadata()],
  oxc: false,
  // The whole suite (`npm test`); vitest.quick.config.ts narrows it for `npm run test:quick`.
  test: {
    include: ['src/**/*.spec.ts', 'test/**/*.e2e-spec.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more workers only queue behind the databases.
    maxWorkers: 2,
  },
});
