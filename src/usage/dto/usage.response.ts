import { ApiProperty } from '@nestjs/swagger';
import { MeterResponse } from '../../plans/dto/plan.response';

export class IngestedEventResponse {
  /** @example "req_7f3a9c" */
  id!: string;

  /** `duplicate`: an event with this id was taken before (it counts once). @example "accepted" */
  @ApiProperty({ enum: ['accepted', 'duplicate'] })
  status!: 'accepted' | 'duplicate';

  /** @example "0b7d3c1e-8f2a-4c5d-9e6f-1a2b3c4d5e6f" */
  subscriptionId!: string | null;

  /** The subscription's period it counts toward (null for a duplicate). @example 3 */
  period!: number | null;
}

export class IngestUsageResponse {
  /** @example 998 */
  accepted!: number;

  /** @example 2 */
  duplicates!: number;

  /** Each event of the batch, in its order. */
  events!: IngestedEventResponse[];
}

/** A metered subscription's current period, as it stands. */
export class SubscriptionUsageResponse {
  /** @example "0b7d3c1e-8f2a-4c5d-9e6f-1a2b3c4d5e6f" */
  subscriptionId!: string;

  meter!: MeterResponse;

  /** The period the usage counts toward now (charged with the next one's fixed fee). @example 3 */
  period!: number;

  /** ISO 8601 UTC. @example "2026-11-01T00:00:00.000Z" */
  periodStart!: string;

  /** ISO 8601 UTC. @example "2026-12-01T00:00:00.000Z" */
  periodEnd!: string;

  /** Until when late events still count toward it. @example "2026-12-01T01:00:00.000Z" */
  acceptsEventsUntil!: string;

  /** Events counted. @example 1520 */
  events!: number;

  /** The running total of units. @example "1520" */
  units!: string;

  /** @example "1000" */
  includedUnits!: string;

  /** @example "520" */
  billableUnits!: string;

  /** What the usage comes to so far, before the cap. @example "1.04" */
  usageAmount!: string;

  /** What would be charged for it now: `usageAmount` up to the cap. @example "1.04" */
  chargeable!: string;

  /** Whether the usage is past the cap (recorded, never charged beyond it). @example false */
  capped!: boolean;
}
