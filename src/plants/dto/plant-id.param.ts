import { Param } from '@nestjs/common';
import { ParseInt64Pipe } from '../../validation/parse-int64.pipe.js';

/**
 * The `{id}` of /plants/{id}, read as an exact int64 (a bigint). GET and
 * DELETE take it through this one decorator, so that their id rules cannot
 * drift apart.
 */
export const PlantIdParam = (): ParameterDecorator => Param('id', ParseInt64Pipe);
