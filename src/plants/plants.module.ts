import { type DynamicModule, Module, type ModuleMetadata } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PageCursorModule } from '../http/page-cursor.module.js';
import { Plant } from './plant.entity.js';
import { PlantsController } from './plants.controller.js';
import { PlantsRepository } from './plants.repository.js';
import { PlantMetrics } from './plant-metrics.js';
import { PlantsService } from './plants.service.js';

/**
 * The three operations on plants. `events` is the module that provides
 * PLANT_CREATED_EVENTS (plant-created.port.ts): what a created plant sets off,
 * written with it. The app names it, so that plants imports no other feature.
 */
@Module({})
export class PlantsModule {
  static forRoot({
    events,
  }: {
    events: NonNullable<ModuleMetadata['imports']>[number];
  }): DynamicModule {
    return {
      module: PlantsModule,
      imports: [TypeOrmModule.forFeature([Plant]), events, PageCursorModule],
      controllers: [PlantsController],
      providers: [PlantsService, PlantsRepository, PlantMetrics],
    };
  }
}
