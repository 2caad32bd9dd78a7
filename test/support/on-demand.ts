/**
 * Whether a measurement suite, which loads the machine and is not timed in
 * CI, was asked for with `variable`. When not, it says so, and how to run it:
 * Vitest lists a skipped file on one line, without its describe titles.
 */
export function onDemand(variable: string, file: string): boolean {
  if (process.env[variable]) return true;
  console.log(
    `${file} is a measurement, skipped unless asked for: ` +
      `npm run -s build && ${variable}=1 npx vitest run ${file}`,
  );
  return false;
}
