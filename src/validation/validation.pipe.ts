import {
  type ArgumentMetadata,
  BadRequestException,
  Injectable,
  type PipeTransform,
  type Type,
} from '@nestjs/common';
import { validateSync, type ValidationError, type ValidatorOptions } from 'class-validator';

function messages(error: ValidationError, path: string[] = []): string[] {
  const here = [...path, error.property];
  const own = Object.values(error.constraints ?? {}).map((message) =>
    // class-validator starts messages with the property name; give nested ones their path.
    path.length > 0 ? `${here.join('.')}: ${message}` : message,
  );
  return [...own, ...(error.children ?? []).flatMap((child) => messages(child, here))];
}

/** Types that are not DTOs: a parse pipe or nothing reads them (as Nest's ValidationPipe skips them). */
const NOT_DTOS: ReadonlySet<unknown> = new Set([
  String,
  Boolean,
  Number,
  BigInt,
  Array,
  Object,
  Buffer,
  Date,
]);

const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  stopAtFirstError: true,
  validationError: { target: false, value: false },
};

/**
 * The one validation pipe of the app (registered as APP_PIPE): a body, query
 * or path parameter typed with a DTO class is checked against the DTO's
 * class-validator rules and handed on as an instance of that class; unknown
 * properties are errors that name the property, and the 400's message lists
 * every problem, field by field.
 *
 * Why not Nest's ValidationPipe: its copy into the class goes through
 * class-transformer, which this API's DTOs do not need (the JSON body parser
 * already gives ids as bigints, and no DTO nests another), and which skips a
 * key that names an inherited member (`toString`, `__proto__`, ...), so that
 * such a key was silently dropped. Its generic work (class-transformer, its
 * checks for sparse arrays, binary and nested values, an async turn per step)
 * took 6.8 µs per NewPlant against 2.8 µs here (BENCHMARKS.md's git history), and ran for
 * every parameter of every route. This is the pipe Nest's documentation
 * builds by hand ("Class validator"), with class-validator's synchronous
 * entry point.
 */
@Injectable()
export class DtoValidationPipe implements PipeTransform<unknown, unknown> {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const dto = metadata.metatype;
    if (metadata.type === 'custom' || dto === undefined || NOT_DTOS.has(dto)) return value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new BadRequestException(`the ${metadata.type} must be a JSON object`);
    }
    // Before the copy: assigning a `__proto__` key would set the copy's prototype.
    const inherited = Object.keys(value).filter((key) => key in Object.prototype);
    if (inherited.length > 0) {
      throw new BadRequestException(
        inherited.map((key) => `property ${key} should not exist`).join('; '),
      );
    }
    const prototype = (dto as Type<object>).prototype as object;
    const instance = Object.assign(Object.create(prototype) as object, value);
    const errors = validateSync(instance, VALIDATOR_OPTIONS);
    if (errors.length > 0) {
      throw new BadRequestException(errors.flatMap((error) => messages(error)).join('; '));
    }
    return instance;
  }
}
