import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { ValidationError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { drainedWrite } from '../common/http/drained-write';
import { ApiAuthenticated, ApiErrors } from '../common/swagger/api-errors.decorator';
import { LedgerExportQueryDto } from './dto/ledger-export.dto';
import { LEDGER_CSV_HEADER } from './ledger-csv';
import { PaymentsService } from './payments.service';

/**
 * A validated date as an instant, refused with a 400 when it names none (`2026-13-01`, `2026-02-31`): always
 * before anything of the response is written.
 */
function instant(field: string, value: string): Date {
  const date = new Date(value);
  // `Date` rolls a day past the month's end over (2026-02-31 is March 3): that is no date.
  const [year, month, day] = value.slice(0, 10).split('-').map(Number);
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (Number.isNaN(date.getTime()) || month < 1 || month > 12 || day < 1 || day > lastDay) {
    throw new ValidationError(`${field}: not a date`, [{ field, message: 'not a date' }]);
  }
  return date;
}

@ApiTags('Payments')
@ApiAuthenticated()
@Controller('api/exports')
export class ExportsController {
  constructor(private readonly payments: PaymentsService) {}

  /**
   * The ledger as CSV, oldest first: every payment, charge (failed ones too, with why), refund
   * (negative) and unattributed receipt written in `[from, to)`, amounts exact, with signatures
   * (docs/refunds.md, "Ledger export"). Streamed: any length costs the same memory.
   */
  @Get('ledger')
  @ApiOperation({ summary: 'Export the ledger' })
  @ApiProduces('text/csv')
  @ApiOkResponse({
    description: 'RFC 4180 CSV with a header record',
    content: { 'text/csv': { schema: { type: 'string' } } },
  })
  @ApiErrors([ErrorCode.VALIDATION_ERROR, 'to: must be after from'])
  async ledger(
    @MerchantId() merchantId: string,
    @Query() query: LedgerExportQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    const from = query.from === undefined ? null : instant('from', query.from);
    const to = query.to === undefined ? null : instant('to', query.to);
    if (from && to && to.getTime() <= from.getTime()) {
      throw new ValidationError('to: must be after from', [
        { field: 'to', message: 'must be after from' },
      ]);
    }
    const name = `ledger-${query.from?.slice(0, 10) ?? 'start'}-${query.to?.slice(0, 10) ?? 'now'}`;
    res
      .status(200)
      .type('text/csv; charset=utf-8')
      .setHeader('Content-Disposition', `attachment; filename="${name}.csv"`)
      .setHeader('Cache-Control', 'no-store');
    if (!(await drainedWrite(res, LEDGER_CSV_HEADER))) return;
    await this.payments.exportCsv(merchantId, { from, to }, (chunk) => drainedWrite(res, chunk));
    if (!res.destroyed) res.end();
  }
}
