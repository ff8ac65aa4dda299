import { Controller, Get, Param, Res } from '@nestjs/common';
import {
  ApiExcludeEndpoint,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { IdParam } from '../common/decorators/id-param.decorator';
import { Public } from '../common/decorators/public.decorator';
import { NotFoundError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { ApiAuthenticated, ApiErrors } from '../common/swagger/api-errors.decorator';
import { DocumentsService, RenderedDocument } from './documents.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NOT_FOUND: [ErrorCode, string] = [ErrorCode.INVOICE_NOT_FOUND, 'Invoice not found'];
const PDF = { 'application/pdf': { schema: { type: 'string', format: 'binary' } } };

/** A PDF, shown in the browser (`inline`) under its file name; never cached (it changes). */
function sendPdf(res: Response, document: RenderedDocument): void {
  res
    .type('application/pdf')
    .setHeader('Content-Disposition', `inline; filename="${document.filename}"`)
    .setHeader('Cache-Control', 'no-store')
    .send(document.pdf);
}

/** The merchant's documents of its invoices (docs/refunds.md, "Documents"). */
@ApiTags('Invoices')
@ApiAuthenticated()
@Controller('api/invoices')
export class DocumentsController {
  constructor(private readonly documents: DocumentsService) {}

  /** The invoice as a PDF: lines, tax and totals, in the merchant's name. */
  @Get(':id/pdf')
  @ApiOperation({ summary: 'The invoice as a PDF' })
  @ApiProduces('application/pdf')
  @ApiOkResponse({ description: 'The PDF', content: PDF })
  @ApiErrors(NOT_FOUND)
  async invoice(
    @MerchantId() merchantId: string,
    @IdParam('Invoice', ErrorCode.INVOICE_NOT_FOUND) id: string,
    @Res() res: Response,
  ): Promise<void> {
    sendPdf(res, await this.documents.invoice(merchantId, id, 'invoice'));
  }

  /** Its receipt once Paid: each payment and refund with its signature and explorer link. */
  @Get(':id/receipt/pdf')
  @ApiOperation({ summary: 'The receipt of a Paid invoice as a PDF' })
  @ApiProduces('application/pdf')
  @ApiOkResponse({ description: 'The PDF', content: PDF })
  @ApiErrors(NOT_FOUND, [
    ErrorCode.CONFLICT,
    'Invoice INV-000042 is Open: its receipt exists once it is Paid',
  ])
  async receipt(
    @MerchantId() merchantId: string,
    @IdParam('Invoice', ErrorCode.INVOICE_NOT_FOUND) id: string,
    @Res() res: Response,
  ): Promise<void> {
    sendPdf(res, await this.documents.invoice(merchantId, id, 'receipt'));
  }
}

/** The merchant's credit notes as PDFs. */
@ApiTags('Credit notes')
@ApiAuthenticated()
@Controller('api/credit-notes')
export class CreditNoteDocumentsController {
  constructor(private readonly documents: DocumentsService) {}

  @Get(':id/pdf')
  @ApiOperation({ summary: 'The credit note as a PDF' })
  @ApiProduces('application/pdf')
  @ApiOkResponse({ description: 'The PDF', content: PDF })
  @ApiErrors([ErrorCode.NOT_FOUND, 'Credit note not found'])
  async creditNote(
    @MerchantId() merchantId: string,
    @IdParam('Credit note') id: string,
    @Res() res: Response,
  ): Promise<void> {
    sendPdf(res, await this.documents.creditNote(merchantId, id));
  }
}

/**
 * The same documents for the customer, linked from the hosted invoice page and the portal: the
 * invoice's id opens them, as it opens its checkout page (no API key; rate limited per client).
 */
@Public()
@Controller('checkout')
export class PublicDocumentsController {
  constructor(private readonly documents: DocumentsService) {}

  @Get('invoices/:id/pdf')
  @ApiExcludeEndpoint()
  async invoice(@Param('id') id: string, @Res() res: Response): Promise<void> {
    if (!UUID.test(id)) throw new NotFoundError('Invoice', ErrorCode.INVOICE_NOT_FOUND);
    sendPdf(res, await this.documents.invoice(null, id.toLowerCase(), 'invoice'));
  }

  @Get('invoices/:id/receipt/pdf')
  @ApiExcludeEndpoint()
  async receipt(@Param('id') id: string, @Res() res: Response): Promise<void> {
    if (!UUID.test(id)) throw new NotFoundError('Invoice', ErrorCode.INVOICE_NOT_FOUND);
    sendPdf(res, await this.documents.invoice(null, id.toLowerCase(), 'receipt'));
  }

  @Get('credit-notes/:id/pdf')
  @ApiExcludeEndpoint()
  async creditNote(@Param('id') id: string, @Res() res: Response): Promise<void> {
    if (!UUID.test(id)) throw new NotFoundError('Credit note');
    sendPdf(res, await this.documents.creditNote(null, id.toLowerCase()));
  }
}
