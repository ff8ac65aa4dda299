import { Module } from '@nestjs/common';
import { EmailDeliveryWorker } from './email-delivery.worker';
import { EmailMetrics } from './email-metrics';
import { EmailOutboxRepository } from './email-outbox.repository';
import { EmailOutboxService } from './email-outbox.service';
import { EmailSender } from './email-sender';

/**
 * Outgoing e-mail: the outbox (`EmailOutboxService.enqueue`, called inside the transaction of the
 * change a message tells about), the worker that sends queued messages over SMTP with retries
 * (on instances whose `ROLE` runs background work) and the renderer of the invoice notification
 * (`renderInvoiceEmail`, a pure function). Modules that send e-mail import this one.
 */
@Module({
  providers: [
    EmailOutboxRepository,
    EmailOutboxService,
    EmailSender,
    EmailDeliveryWorker,
    EmailMetrics,
  ],
  exports: [EmailOutboxService],
})
export class EmailModule {}
