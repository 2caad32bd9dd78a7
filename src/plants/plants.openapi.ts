import { applyDecorators } from '@nestjs/common';
import {
  ApiBody,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  getSchemaPath,
} from '@nestjs/swagger';
import { CURSOR_RULE } from '../http/page-cursor.js';
import { ApiAfterQuery, ApiLimitQuery, NEXT_LINK_HEADER } from '../openapi/paging.js';
import { ApiErrorResponses } from '../errors/api-error-responses.decorator.js';
import { LIMIT_RULE, PLANTS_LIMIT } from './dto/list-plants.query.js';
import { NewPlantDto } from './dto/new-plant.dto.js';
import { PlantDto } from './dto/plant.dto.js';

/*
 * The OpenAPI description of the four operations, kept beside the
 * controller so that it stays thin. Summaries and descriptions follow the
 * specification (section 4) and the contract; the example error messages are
 * the ones the service sends (test/openapi-client.e2e-spec.ts provokes each
 * one and checks it is documented).
 */

const ID_RULE = 'id must be an integer from -9223372036854775808 to 9223372036854775807';

/** A Plant as GET /plants/{id} and POST /plants answer it. */
const PLANT_EXAMPLES = {
  tagged: {
    summary: 'A plant with a tag',
    value: new PlantDto('Monstera deliciosa', 'tropical'),
  },
  untagged: {
    summary: 'A plant without a tag (tag is left out)',
    value: new PlantDto('Fern'),
  },
};

export function ApiListPlants(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'listPlants',
      summary: 'Get plants',
      description:
        'Returns the plants from the system that the caller has access to: those created with a token of the same owner, in ascending id order. ' +
        'When limit is given, no more than that many plants are returned; without it, all of them. ' +
        'While plants remain after a limited page, the Link header carries the URL of the next page (rel="next"), whose opaque cursor goes on after the last plant of this page: ' +
        'following next links visits each plant once, in ascending id order, also while plants are created and deleted. The last page, and limit=0, have no next link.',
    }),
    ApiLimitQuery(
      PLANTS_LIMIT,
      'The maximum number of plants to return; without it, all of them',
      20,
    ),
    ApiAfterQuery(),
    ApiOkResponse({
      type: PlantDto,
      isArray: true,
      description: "The caller's plants, in ascending id order",
      headers: NEXT_LINK_HEADER,
      examples: {
        plants: {
          summary: 'Two plants, one without a tag',
          value: [new PlantDto('Monstera deliciosa', 'tropical'), new PlantDto('Fern')],
        },
        empty: { summary: 'The caller has no plant', value: [] },
      },
    }),
    ApiErrorResponses({
      400: [LIMIT_RULE, CURSOR_RULE, 'property colour should not exist'],
      401: true,
      403: ['the access token lacks the scope this operation needs: plants:read'],
      429: true,
      500: true,
      503: true,
    }),
  );
}

export function ApiCreatePlant(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'createPlant',
      summary: 'Create a plant',
      description:
        "Adds a plant to the caller's collection. When the body is a valid NewPlant and the token is valid, the service answers 200 with the Plant (name and tag; id is not part of it). " +
        'Posting the same id again with the same name and tag answers 200 and changes nothing; the same id with another name or tag is a 409.',
    }),
    ApiExtraModels(NewPlantDto),
    ApiBody({
      required: true,
      schema: { $ref: getSchemaPath(NewPlantDto) },
      examples: {
        tagged: {
          summary: 'A plant with a tag',
          value: { id: 1, name: 'Monstera deliciosa', tag: 'tropical' },
        },
        untagged: { summary: 'A plant without a tag', value: { id: 2, name: 'Fern' } },
      },
    }),
    ApiOkResponse({
      type: PlantDto,
      description: 'The plant was created (or was already there, identical)',
      examples: PLANT_EXAMPLES,
    }),
    ApiErrorResponses({
      400: [
        'name must not be empty',
        `property colour should not exist; ${ID_RULE}`,
        // The body {"id": 1, "name": (cut short).
        "request body is not valid JSON: Object value expected after ':' at position 18",
      ],
      401: true,
      403: ['the access token lacks the scope this operation needs: plants:write'],
      409: ['a plant with id 7 already exists with a different name or tag'],
      413: true,
      415: true,
      429: true,
      500: true,
      503: true,
    }),
  );
}

/** The path id of GET and DELETE /plants/{id}: one description of their shared rules. */
const plantIdParam = (description: string) =>
  ApiParam({ name: 'id', description, schema: { type: 'integer', format: 'int64', example: 1 } });

export function ApiGetPlant(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'getPlant',
      summary: 'Get a plant',
      description:
        'Returns a single plant, selected by the id supplied in the path. ' +
        "An id the caller has no plant with, including another owner's plant, is a 404.",
    }),
    plantIdParam('The id of the plant to return'),
    ApiOkResponse({
      type: PlantDto,
      description: 'The plant',
      examples: PLANT_EXAMPLES,
    }),
    ApiErrorResponses({
      400: [ID_RULE],
      401: true,
      403: ['the access token lacks the scope this operation needs: plants:read'],
      404: ['no plant with id 3'],
      414: true,
      429: true,
      500: true,
      503: true,
    }),
  );
}

export function ApiDeletePlant(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'deletePlant',
      summary: 'Delete a plant',
      description:
        'Deletes a single plant, selected by the id supplied in the path. A success response carries no body. ' +
        "An id the caller has no plant with, including another owner's plant, is a 404.",
    }),
    plantIdParam('The id of the plant to delete'),
    ApiNoContentResponse({ description: 'The plant was deleted' }),
    ApiErrorResponses({
      400: [ID_RULE],
      401: true,
      403: ['the access token lacks the scope this operation needs: plants:write'],
      404: ['no plant with id 3'],
      414: true,
      429: true,
      500: true,
      503: true,
    }),
  );
}
