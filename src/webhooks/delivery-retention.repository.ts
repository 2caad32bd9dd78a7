import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Transactions } from '../database/transactions.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';

/** The retention of finished deliveries (WebhookRetention runs it). */
@Injectable()
export class DeliveryRetentionRepository {
  constructor(
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    private readonly transactions: Transactions,
  ) {}

  /**
   * Deletes up to `batch` deliveries that finished (delivered or failed)
   * before `cutoff`, in one statement; returns how many. A row an older
   * instance finished has no finish time and counts from its creation (which
   * is earlier). A pending row never goes: the condition is repeated outside
   * the subquery, so a delivery sent again meanwhile (pending once more) stays.
   */
  async deleteFinishedBefore(cutoff: number, batch: number): Promise<number> {
    const finished = `state IN ('delivered', 'failed') AND (finished_at < :cutoff OR (finished_at IS NULL AND created_at < :cutoff))`;
    const old = this.deliveries
      .createQueryBuilder('old')
      .select('old.id')
      // Unqualified columns name the subquery's own rows.
      .where(finished)
      .limit(batch);
    return this.transactions.write(async (manager) => {
      const result = await manager
        .createQueryBuilder()
        .delete()
        .from(WebhookDelivery)
        .where(`id IN (${old.getQuery()})`)
        .andWhere(finished)
        .setParameters({ cutoff })
        .execute();
      return result.affected ?? 0;
    });
  }
}
