import { BadRequestException, ValidationPipe, type ValidationError } from '@nestjs/common';

function messages(error: ValidationError, path: string[] = []): string[] {
  const here = [...path, error.property];
  const own = Object.values(error.constraints ?? {}).map((message) =>
    // class-validator starts messages with the property name; give nested ones their path.
    path.length > 0 ? `${here.join('.')}: ${message}` : message,
  );
  return [...own, ...(error.children ?? []).flatMap((child) => messages(child, here))];
}

/**
 * The one validation pipe of the app (registered as APP_PIPE): unknown
 * properties are errors that name the property, values are transformed into
 * the DTO's types, and the 400's message lists every problem, field by field.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
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
