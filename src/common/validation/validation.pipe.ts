import {
  type ArgumentMetadata,
  BadRequestException,
  ValidationPipe,
  type ValidationError,
} from '@nestjs/common';

function messages(error: ValidationError, path: string[] = []): string[] {
  const here = [...path, error.property];
  const own = Object.values(error.constraints ?? {}).map((message) =>
    // class-validator starts messages with the property name; give nested ones their path.
    path.length > 0 ? `${here.join('.')}: ${message}` : message,
  );
  return [...own, ...(error.children ?? []).flatMap((child) => messages(child, here))];
}

/**
 * class-transformer skips a key that names an inherited member of the DTO
 * (`toString`, `hasOwnProperty`, `__proto__`, ...), so the whitelist never
 * sees it and it was silently dropped. It is an unknown property all the same.
 */
class StrictValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'custom' && typeof value === 'object' && value !== null) {
      const inherited = Object.keys(value).filter((key) => key in Object.prototype);
      if (inherited.length > 0) {
        throw new BadRequestException(
          inherited.map((key) => `property ${key} should not exist`).join('; '),
        );
      }
    }
    return super.transform(value, metadata) as Promise<unknown>;
  }

  /** A bigint is a primitive like a number: a parse pipe reads it (ParseInt64Pipe), no DTO. */
  protected override toValidate(metadata: ArgumentMetadata): boolean {
    return (metadata.metatype as unknown) !== BigInt && super.toValidate(metadata);
  }
}

/**
 * The one validation pipe of the app (registered as APP_PIPE): unknown
 * properties are errors that name the property, values are transformed into
 * the DTO's types, and the 400's message lists every problem, field by field.
 */
export function createValidationPipe(): ValidationPipe {
  return new StrictValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) =>
      new BadRequestException(errors.flatMap((error) => messages(error)).join('; ')),
  });
}
