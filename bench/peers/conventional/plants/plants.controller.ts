import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  ParseIntPipe,
  Post,
  Query,
} from '@nestjs/common';
import { CurrentOwner } from '../auth/current-owner.decorator.js';
import { CreatePlantDto } from './dto/create-plant.dto.js';
import { ListPlantsQuery } from './dto/list-plants.query.js';
import { PlantResponse } from './dto/plant.response.js';
import { PlantsService } from './plants.service.js';

@Controller('plants')
export class PlantsController {
  constructor(private readonly plantsService: PlantsService) {}

  @Get()
  async list(@CurrentOwner() owner: string, @Query() query: ListPlantsQuery) {
    const plants = await this.plantsService.list(owner, query.limit);
    return plants.map((plant) => new PlantResponse(plant));
  }

  @Post()
  @HttpCode(200)
  async create(@CurrentOwner() owner: string, @Body() dto: CreatePlantDto) {
    return new PlantResponse(await this.plantsService.create(owner, dto));
  }

  @Delete(':id')
  @HttpCode(204)
  remove(@CurrentOwner() owner: string, @Param('id', ParseIntPipe) id: number): Promise<void> {
    return this.plantsService.remove(owner, id);
  }
}
