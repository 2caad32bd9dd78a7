import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PageCursorModule } from '../http/page-cursor.module.js';
import { WebhookStorageModule } from '../webhooks/webhook-storage.module.js';
import { Plant } from './plant.entity.js';
import { PlantsController } from './plants.controller.js';
import { PlantsRepository } from './plants.repository.js';
import { PlantsService } from './plants.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Plant]), WebhookStorageModule, PageCursorModule],
  controllers: [PlantsController],
  providers: [PlantsService, PlantsRepository],
})
export class PlantsModule {}
