import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Asset, loadAssets } from './assets';
import { html, SafeHtml } from './html';

/**
 * The hosted pages' shell and their bundled assets: one stylesheet and one deferred script, both
 * served by the service with content-hashed URLs (cached for good), no inline script or style,
 * nothing from elsewhere.
 */
@Injectable()
export class PageShell {
  readonly assets: Map<string, Asset> = loadAssets();

  constructor(private readonly config: AppConfig) {}

  /** The Wallet Standard chain of this deployment (`solana:localnet`, `solana:mainnet`, ...). */
  get chain(): string {
    const cluster = this.config.SOLANA_CLUSTER;
    return `solana:${cluster === 'mainnet-beta' ? 'mainnet' : cluster}`;
  }

  render(input: {
    title: string;
    page: 'invoice' | 'plan' | 'portal' | 'error';
    body: SafeHtml;
    session?: string;
  }): string {
    const css = this.assets.get('checkout.css');
    const js = this.assets.get('checkout.js');
    return html`<!doctype html>
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="referrer" content="no-referrer" />
          <title>${input.title}</title>
          <link rel="icon" href="/checkout/icon.svg" type="image/svg+xml" />
          <link rel="stylesheet" href="/checkout/assets/checkout.css?v=${css?.etag.slice(1, -1)}" />
          <script defer src="/checkout/assets/checkout.js?v=${js?.etag.slice(1, -1)}"></script>
        </head>
        <body>
          <main
            data-page="${input.page}"
            data-chain="${this.chain}"
            data-session="${input.session}"
          >
            ${input.body}
            <p id="status" role="status" aria-live="polite"></p>
          </main>
        </body>
      </html> `.toString();
  }

  /** A page for a link that leads nowhere (unknown invoice or plan, expired portal link). */
  error(title: string, message: string): string {
    return this.render({
      title,
      page: 'error',
      body: html`<h1>${title}</h1>
        <p>${message}</p>`,
    });
  }
}
