import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Post,
  Query,
  Res,
  StreamableFile,
} from '@nestjs/common';
import { RouteSchema } from '@nestjs/platform-fastify';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CallerOwner } from '../auth/caller-owner.decorator.js';
import { RequiredScope } from '../auth/required-scope.decorator.js';
import { CallerScope } from '../database/caller-scope.decorator.js';
import type { RequestScope } from '../database/request-scope.js';
import { nextLink, PageCursors } from '../http/page-cursor.js';
import { jsonArrayStream } from './json-array-stream.js';
import { type ListPlantsQuery, ParseListPlantsQueryPipe } from './dto/list-plants.query.js';
import { PlantIdParam } from './dto/plant-id.param.js';
import { NewPlantDto } from './dto/new-plant.dto.js';
import { PlantDto } from './dto/plant.dto.js';
import { PLANT_LIST_RESPONSE_SCHEMA, PLANT_RESPONSE_SCHEMA } from './dto/plant.response-schema.js';
import { ApiCreatePlant, ApiDeletePlant, ApiGetPlant, ApiListPlants } from './plants.openapi.js';
import { PlantsService } from './plants.service.js';

@ApiTags('plants')
@ApiBearerAuth('bearerAuth')
@Controller('plants')
export class PlantsController {
  constructor(
    private readonly plants: PlantsService,
    private readonly cursors: PageCursors,
  ) {}

  @Get()
  @RequiredScope('plants:read')
  @RouteSchema(PLANT_LIST_RESPONSE_SCHEMA)
  @ApiListPlants()
  async list(
    @CallerOwner() owner: string,
    @CallerScope() scope: RequestScope,
    @Query(ParseListPlantsQueryPipe) query: ListPlantsQuery,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PlantDto[] | StreamableFile> {
    const list = await this.plants.list(owner, query, scope);
    if (list.next !== undefined && query.limit !== undefined) {
      void reply.header(
        'Link',
        nextLink('/plants', query.limit, this.cursors.encode('plants', list.next)),
      );
    }
    if (list.complete) return list.plants;
    return new StreamableFile(jsonArrayStream(list.plants, list.rest), {
      type: 'application/json; charset=utf-8',
    });
  }

  @Post()
  @RequiredScope('plants:write')
  @HttpCode(HttpStatus.OK)
  @RouteSchema(PLANT_RESPONSE_SCHEMA)
  @ApiCreatePlant()
  create(
    @CallerOwner() owner: string,
    @CallerScope() scope: RequestScope,
    @Body() plant: NewPlantDto,
  ): Promise<PlantDto> {
    return this.plants.create(owner, plant, scope);
  }

  @Get(':id')
  @RequiredScope('plants:read')
  @RouteSchema(PLANT_RESPONSE_SCHEMA)
  @ApiGetPlant()
  get(
    @CallerOwner() owner: string,
    @CallerScope() scope: RequestScope,
    @PlantIdParam() id: bigint,
  ): Promise<PlantDto> {
    return this.plants.get(owner, id, scope);
  }

  @Delete(':id')
  @RequiredScope('plants:write')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiDeletePlant()
  async delete(
    @CallerOwner() owner: string,
    @CallerScope() scope: RequestScope,
    @PlantIdParam() id: bigint,
  ): Promise<void> {
    await this.plants.delete(owner, id, scope);
  }
}
