import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  OWNERS_PER_SEQUENCE,
  type StoreModel,
  type StoreReal,
  storeCommands,
} from './support/plant-store-model.js';
import { databaseKinds } from './support/test-database.js';
import { useTestApp } from './support/test-app.js';

/** Command sequences per database and CI run; MODEL_RUNS raises it for a longer local hunt. */
const RUNS = Number(process.env.MODEL_RUNS ?? 1000);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

describe.each(databaseKinds())('the service against an in-memory model on %s', (kind) => {
  const t = useTestApp(kind);

  it(`agrees with the model after every step of ${RUNS} random sequences of create / list / delete`, async () => {
    const fastify = t.current.app.getHttpAdapter().getInstance();
    const steps = { count: 0 };
    let sequences = 0;
    const setup = async (): Promise<{ model: StoreModel; real: StoreReal }> => {
      // Fresh owners for each sequence: the same database, but nothing to see from earlier ones.
      const run = randomBytes(6).toString('hex');
      const auth: string[] = [];
      for (let slot = 0; slot < OWNERS_PER_SEQUENCE; slot++) {
        auth.push(`Bearer ${await t.current.tokenFor(`model-${run}-${slot}`)}`);
      }
      const model = { owners: auth.map(() => new Map()) };
      return { model, real: { inject: (request) => fastify.inject(request), auth, steps } };
    };
    await fc.assert(
      fc.asyncProperty(storeCommands, async (commands) => {
        sequences += 1;
        await fc.asyncModelRun(setup, commands);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    expect(sequences).toBeGreaterThanOrEqual(RUNS);
    console.info(`model-based on ${kind}: ${sequences} sequences, ${steps.count} steps checked`);
  }, 300_000);
});
