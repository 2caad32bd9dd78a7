import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Post,
  Query,
  StreamableFile,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import { CallerOwner } from '../auth/authenticated-owner.js';
import {
  ApiErrorResponses,
  COMMON_ERRORS,
} from '../common/errors/api-error-responses.decorator.js';
import { ErrorDto } from '../common/errors/error.dto.js';
import { jsonArrayStream } from '../common/json/json-array-stream.js';
import { ListPlantsQuery } from './dto/list-plants.query.js';
import { NewPlantDto } from './dto/new-plant.dto.js';
import { PlantIdParams } from './dto/plant-id.params.js';
import { PlantDto } from './dto/plant.dto.js';
import { PlantsService } from './plants.service.js';

@ApiTags('plants')
@ApiBearerAuth('bearerAuth')
@Controller('plants')
export class PlantsController {
  constructor(private readonly plants: PlantsService) {}

  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'createPlant',
    summary: 'Create a plant',
    description:
      "Adds a plant to the caller's collection. Posting the same id again with the same name and tag answers 200 and changes nothing; the same id with another name or tag is a 409.",
  })
  @ApiBody({ type: NewPlantDto, required: true })
  @ApiOkResponse({
    type: PlantDto,
    description: 'The plant was created (or was already there, identical)',
  })
  @ApiErrorResponses(...COMMON_ERRORS)
  @ApiConflictResponse({
    type: ErrorDto,
    description: 'The id is already used by this owner for a different plant',
  })
  @ApiPayloadTooLargeResponse({ type: ErrorDto, description: 'The body is larger than the limit' })
  @ApiUnsupportedMediaTypeResponse({
    type: ErrorDto,
    description: 'The body is not application/json',
  })
  create(@CallerOwner() owner: string, @Body() plant: NewPlantDto): Promise<PlantDto> {
    return this.plants.create(owner, plant);
  }

  @Get()
  @ApiOperation({
    operationId: 'listPlants',
    summary: 'List plants',
    description:
      'Returns the plants the caller has access to (those created with a token of the same owner), in ascending id order. With limit, no more than that many plants are returned.',
  })
  @ApiOkResponse({ type: PlantDto, isArray: true, description: "The caller's plants" })
  @ApiErrorResponses(...COMMON_ERRORS)
  async list(
    @CallerOwner() owner: string,
    @Query() query: ListPlantsQuery,
  ): Promise<PlantDto[] | StreamableFile> {
    const list = await this.plants.list(owner, query.limit);
    if (list.complete) return list.plants;
    return new StreamableFile(jsonArrayStream(list.plants, list.rest), {
      type: 'application/json; charset=utf-8',
    });
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    operationId: 'deletePlant',
    summary: 'Delete a plant',
    description:
      'Deletes a single plant, selected by the id supplied in the path. A success response carries no body.',
  })
  @ApiNoContentResponse({ description: 'The plant was deleted' })
  @ApiErrorResponses(...COMMON_ERRORS)
  @ApiNotFoundResponse({ type: ErrorDto, description: 'The caller has no plant with this id' })
  async delete(@CallerOwner() owner: string, @Param() params: PlantIdParams): Promise<void> {
    await this.plants.delete(owner, params.id);
  }
}
