import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../common/decorators/public.decorator';
import { NotFoundError } from '../../common/errors/domain-error';
import { CheckoutPages } from './checkout-pages.service';
import { PageShell } from './layout';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Sends a page: HTML, never cached (its status changes), or the HTML "not found" page for an
 * unknown or malformed id (a browser asked: no JSON error body).
 */
export async function sendPage(
  res: Response,
  title: string,
  shell: PageShell,
  render: () => Promise<string>,
): Promise<void> {
  res.type('html').setHeader('Cache-Control', 'no-store');
  try {
    res.send(await render());
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    res.status(404).send(shell.error(`${title} not found`, 'Check the link you were given.'));
  }
}

/** The hosted checkout pages and their bundled assets (no API key; rate limited per client). */
@ApiExcludeController()
@Public()
@Controller('checkout')
export class CheckoutPagesController {
  constructor(
    private readonly pages: CheckoutPages,
    private readonly shell: PageShell,
  ) {}

  @Get('invoices/:id')
  invoice(@Param('id') id: string, @Res() res: Response): Promise<void> {
    return sendPage(res, 'Invoice', this.shell, () =>
      UUID.test(id) ? this.pages.invoice(id) : Promise.reject(new NotFoundError('Invoice')),
    );
  }

  @Get('plans/:id')
  plan(@Param('id') id: string, @Res() res: Response): Promise<void> {
    return sendPage(res, 'Plan', this.shell, () =>
      UUID.test(id) ? this.pages.plan(id) : Promise.reject(new NotFoundError('Plan')),
    );
  }

  /** The bundled script and stylesheet; their URLs carry a content hash, so they cache for good. */
  @Get('assets/:name')
  asset(@Param('name') name: string, @Req() req: Request, @Res() res: Response): void {
    const asset = this.shell.assets.get(name);
    if (!asset) throw new NotFoundError('Asset');
    res.setHeader('ETag', asset.etag);
    // Cached for good only under its own hash: another version's URL (an instance not yet
    // redeployed) must not pin this file in caches for a year.
    const current = req.query.v === asset.etag.slice(1, -1);
    res.setHeader('Cache-Control', current ? 'public, max-age=31536000, immutable' : 'no-cache');
    if (req.headers['if-none-match'] === asset.etag) {
      res.status(304).end();
      return;
    }
    res.type(asset.type).send(asset.body);
  }
}
