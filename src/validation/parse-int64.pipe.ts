import {
  type ArgumentMetadata,
  BadRequestException,
  Injectable,
  type PipeTransform,
} from '@nestjs/common';
import { isInt64, parseDecimalInteger } from './int64.js';
import { INT64_RULE } from './int64.validators.js';

/**
 * A path or query value as a signed 64-bit integer: decimal digits with an
 * optional minus sign, within int64, read into a bigint (never through a JS
 * number). Anything else is a 400 that names the parameter. Like Nest's
 * ParseIntPipe, for a single scalar that needs no DTO.
 */
@Injectable()
export class ParseInt64Pipe implements PipeTransform<unknown, bigint> {
  transform(value: unknown, metadata: ArgumentMetadata): bigint {
    const parsed = typeof value === 'string' ? parseDecimalInteger(value) : undefined;
    if (isInt64(parsed)) return parsed;
    throw new BadRequestException(`${metadata.data ?? 'value'} must be ${INT64_RULE}`);
  }
}
