import { Module } from '@nestjs/common';
import { SqlStatements } from '../database/sql-statements.js';
import { PlantsController } from './plants.controller.js';
import { PlantsRepository } from './plants.repository.js';
import { PlantsService } from './plants.service.js';

@Module({
  controllers: [PlantsController],
  providers: [PlantsService, PlantsRepository, SqlStatements],
})
export class PlantsModule {}
