import { Controller, Get, HttpCode, HttpStatus, Query } from '@nestjs/common';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { IdParam } from '../common/decorators/id-param.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import { ApiAuthenticated, ApiErrors } from '../common/swagger/api-errors.decorator';
import { ListEventsQueryDto } from './dto/event.dto';
import { EventResponse } from './dto/event.response';
import { EVENT_ID_PREFIX } from './event-types';
import { EventsService } from './events.service';

const EventId = () => IdParam('Event', ErrorCode.NOT_FOUND, 'id', EVENT_ID_PREFIX);

@ApiTags('Events')
@ApiAuthenticated()
@Controller('api/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  /**
   * The merchant's events, newest first, each with its latest webhook delivery. Paged: `limit`
   * (default 100, max 1000) and `startingAfter` (the last id of the previous page).
   */
  @Get()
  @ApiOperation({ summary: 'List events' })
  @ApiErrors([ErrorCode.VALIDATION_ERROR, 'type: type must be one of the following values: ...'])
  list(
    @MerchantId() merchantId: string,
    @Query() query: ListEventsQueryDto,
  ): Promise<EventResponse[]> {
    return this.events.list(merchantId, query);
  }

  /** One event (`evt_...`) with its latest webhook delivery. */
  @Get(':id')
  @ApiOperation({ summary: 'Get an event' })
  @ApiErrors([ErrorCode.NOT_FOUND, 'Event not found'])
  get(@MerchantId() merchantId: string, @EventId() id: string): Promise<EventResponse> {
    return this.events.get(merchantId, id);
  }

  /**
   * Queues a new delivery of the event to the endpoint configured now, due at once, with its own
   * 3-day retry window. Answers 202 with the event, whose `delivery` is the new one.
   */
  @IdempotentPost(':id/redeliver')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({ summary: 'Redeliver an event' })
  @ApiErrors(
    [ErrorCode.NOT_FOUND, 'Event not found'],
    [
      ErrorCode.VALIDATION_ERROR,
      'webhookUrl: no webhook endpoint is configured; set one with PUT /api/settings/webhook',
    ],
  )
  redeliver(@MerchantId() merchantId: string, @EventId() id: string): Promise<EventResponse> {
    return this.events.redeliver(merchantId, id);
  }
}
