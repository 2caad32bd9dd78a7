import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type {
  CreatedPlant,
  CreatedPlantStatementPart,
  PlantCreatedEvents,
} from '../plants/plant-created.port.js';
import { WebhookOutboxRepository } from './webhook-outbox.repository.js';

/**
 * The body of the plant-created webhook: the NewPlant as stored, with the id
 * as an exact JSON number (never through a JS number) and no tag when none.
 */
export function plantCreatedEvent({ id, name, tag }: CreatedPlant): string {
  const tagPart = tag === null ? '' : `,"tag":${JSON.stringify(tag)}`;
  return `{"id":${id},"name":${JSON.stringify(name)}${tagPart}}`;
}

/**
 * The outbox write of a create, which the plants feature calls inside its
 * transaction: one pending delivery per subscription of the owner that is
 * active at that moment, so that the event commits (or not) with the plant.
 * Without subscriptions it costs one index lookup on webhook_subscriptions(owner).
 */
@Injectable()
export class PlantCreatedOutbox implements PlantCreatedEvents {
  constructor(private readonly deliveries: WebhookOutboxRepository) {}

  /** The events' part of a create written as one statement (PostgreSQL only). */
  statementPart(created: string): CreatedPlantStatementPart {
    return {
      ...this.deliveries.enqueueForCreatedSql(created),
      many: this.deliveries.enqueueForManyCreatedSql(created),
      values: (plant, traceparent) => ({
        eventPayload: plantCreatedEvent(plant),
        eventNow: Date.now(),
        eventTraceParent: traceparent,
      }),
    };
  }

  /**
   * Stores the plant's events on `manager`; returns how many. `traceparent`
   * is the create's trace, for the deliveries' spans to link to (null with
   * tracing off), taken by the create itself: written in a batch with others,
   * the current trace would be another create's.
   */
  record(
    manager: EntityManager,
    owner: string,
    plant: CreatedPlant,
    traceparent: string | null,
  ): Promise<number> {
    return this.deliveries.enqueueForOwner(
      manager,
      owner,
      plantCreatedEvent(plant),
      Date.now(),
      traceparent,
    );
  }
}
