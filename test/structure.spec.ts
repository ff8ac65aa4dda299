import { join, sep } from 'node:path';
import { discoverEntities } from '../src/database/entities';
import {
  fileCycles,
  importsLeavingPackage,
  LOCALNET_SRC,
  staticLocalnetImports,
  importsInto,
  moduleCycles,
  MODULES,
  readSources,
  source,
  tableOutsideOwner,
  unlistedModules,
} from './helpers/source-structure';

/**
 * Tables whose SQL lives only in their owner's repository (issue 22, one owner per table). The
 * others still have statements elsewhere; each moves here as its repository is written.
 */
const OWNED_TABLES: [string, { repository: string; module: string }][] = [
  ['email_outbox', { repository: 'email/email-outbox.repository.ts', module: 'email' }],
];

/**
 * The architecture as STYLE.md draws it, checked on the source tree: the floor (common, config,
 * database) knows no room, dependencies between modules point one way, and files stay small
 * enough to read.
 */
const MAX_LINES = 450;
const sources = readSources();
const DOMAIN = [...MODULES.domain, ...MODULES.chain, ...MODULES.edge, ...MODULES.shared];

const importsOf = (module: string) =>
  sources.filter((s) => s.module === module).flatMap((s) => s.imports.map((i) => [s.path, i]));

describe('source structure', () => {
  it.each(MODULES.floor)('%s/ imports no module above the floor', (floor) => {
    expect(importsInto(sources, floor, DOMAIN)).toEqual([]);
  });

  it('common/ does not import config/: it is told what it needs (CommonModule.forRoot)', () => {
    expect(importsInto(sources, 'common', ['config'])).toEqual([]);
  });

  it('every module under src/ is listed in its place', () => {
    expect(unlistedModules(sources)).toEqual([]);
  });

  it('no import cycle anywhere in src/: between modules, or between files', () => {
    expect(moduleCycles(sources)).toEqual([]);
    expect(fileCycles(sources)).toEqual([]);
  });

  it.each(OWNED_TABLES)(
    "%s appears only in its owner's repository (and its entity)",
    (table, owner) => {
      expect(tableOutsideOwner(sources, table, owner)).toEqual([]);
    },
  );

  describe('the rules catch what they are for (planted violations)', () => {
    const tree = (...files: [string, string][]) => files.map(([path, text]) => source(path, text));

    it('the floor importing a room', () => {
      const planted = tree(['common/x.ts', "import { A } from '../billing/a';"]);
      expect(importsInto(planted, 'common', DOMAIN)).toEqual([['common/x.ts', 'billing']]);
    });

    it('common importing config', () => {
      const planted = tree(['common/x.ts', "import { AppConfig } from '../config/app-config';"]);
      expect(importsInto(planted, 'common', ['config'])).toEqual([['common/x.ts', 'config']]);
    });

    it('SQL on a table past its owner', () => {
      const owner = { repository: 'email/email-outbox.repository.ts', module: 'email' };
      const planted = tree(
        ['email/email-outbox.repository.ts', 'INSERT INTO email_outbox'],
        ['email/entities/email-message.entity.ts', "@Entity({ tableName: 'email_outbox' })"],
        ['billing/notices.ts', "UPDATE email_outbox SET status = 'sent'"],
        ['billing/other.ts', 'SELECT 1 FROM email_outboxes'],
      );
      expect(tableOutsideOwner(planted, 'email_outbox', owner)).toEqual(['billing/notices.ts']);
    });

    it('the localnet package loaded statically, or from a second place', () => {
      const planted = tree(
        ['dev/embedded-localnet.ts', "const l = await import('@stablecoin-billing/localnet');"],
        ['main.ts', "import type { EmbeddedLocalnet } from '@stablecoin-billing/localnet';"],
        ['cli/a.ts', "import { LocalnetChain } from '@stablecoin-billing/localnet';"],
        ['cli/b.ts', "const l = require('@stablecoin-billing/localnet');"],
        ['cli/c.ts', "await import('@stablecoin-billing/localnet');"],
      );
      expect(staticLocalnetImports(planted, ['dev/embedded-localnet.ts'])).toEqual([
        'cli/a.ts',
        'cli/b.ts',
        'cli/c.ts',
      ]);
    });

    it('the localnet package reaching into the service', () => {
      const planted = [
        source('faucet.ts', "import { mintTable } from '../../../src/solana/mints';", (x) =>
          join('..', x),
        ),
        source('pubsub.ts', "import { RpcError } from './json-rpc';", (x) => x.slice(2)),
      ];
      expect(importsLeavingPackage(planted)).toEqual(['faucet.ts']);
    });

    it('a module no one listed', () => {
      expect(unlistedModules(tree(['refunds/refunds.service.ts', '']))).toEqual(['refunds']);
    });

    it('a cycle between modules, also through a type-only import, and between files', () => {
      const planted = tree(
        ['billing/a.ts', "import { B } from '../portal/b';"],
        ['portal/b.ts', "import { C } from '../checkout/c';"],
        ['checkout/c.ts', "import type { A } from '../billing/a';"],
        ['plans/p.ts', "import { Q } from '../plans/q';"],
        ['plans/q.ts', "import { P } from '../plans/p';"],
      );
      expect(moduleCycles(planted)).toEqual([['billing', 'checkout', 'portal']]);
      expect(fileCycles(planted)).toEqual([
        ['billing/a', 'checkout/c', 'portal/b'],
        ['plans/p', 'plans/q'],
      ]);
    });
  });

  it(`no file is longer than ${MAX_LINES} lines (specs aside)`, () => {
    const long = sources
      .filter((s) => !s.path.endsWith('.spec.ts'))
      .map((s) => [s.path, s.text.split('\n').length] as const)
      .filter(([, lines]) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('the service loads the localnet package only through import() in dev/embedded-localnet.ts', () => {
    expect(staticLocalnetImports(sources, ['dev/embedded-localnet.ts'])).toEqual([]);
    expect(sources.some((s) => s.module === 'localnet')).toBe(false);
  });

  it('the localnet package imports nothing of the service (it takes plain values)', () => {
    expect(importsLeavingPackage(readSources(LOCALNET_SRC))).toEqual([]);
  });

  it('domain modules record events through events/, never through webhook delivery', () => {
    const offending = sources
      .filter((s) => !['webhooks', 'app.module.ts'].includes(s.module))
      .flatMap((s) => s.imports.filter((i) => i === 'webhooks').map(() => s.path))
      // settings validates webhook URLs with the delivery's own rule (one rule, one place)
      .filter((path) => !path.startsWith(`settings${sep}`));
    expect(offending).toEqual([]);
  });

  it.each([
    // module, and the modules above it that it must never import (STYLE: one-way dependencies)
    ['customers', ['invoices', 'subscriptions', 'plans', 'customer-detail', 'checkout', 'billing']],
    ['plans', ['invoices', 'subscriptions', 'customer-detail', 'checkout', 'billing']],
    ['invoices', ['subscriptions', 'customer-detail', 'checkout', 'billing']],
    ['subscriptions', ['invoices', 'customer-detail', 'checkout', 'billing']],
    ['merchants', ['customers', 'plans', 'invoices', 'subscriptions', 'customer-detail']],
  ])('%s imports nothing above it', (module, above) => {
    const offending = importsOf(module).filter(([, target]) => above.includes(target));
    expect(offending).toEqual([]);
  });

  it('every POST route is declared with @IdempotentPost (the Idempotency-Key handling, D15)', () => {
    const bare = sources.filter((s) => /@Post\(/.test(s.text)).map((s) => s.path);
    expect(bare).toEqual([]);
    expect(sources.filter((s) => /@IdempotentPost\(/.test(s.text)).length).toBeGreaterThan(5);
  });

  it('the chain layer imports no domain module above it', () => {
    const offending = importsOf('solana').filter(
      ([, target]) => DOMAIN.includes(target) && target !== 'solana',
    );
    expect(offending).toEqual([]);
  });

  it('every module keeps its entities in its own entities/ folder, all discovered', () => {
    const entityFiles = sources.filter((s) => /@Entity\(/.test(s.text));
    expect(entityFiles.every((s) => s.path.split(sep).includes('entities'))).toBe(true);
    const names = discoverEntities().map((e) => e.name);
    const declared = entityFiles.flatMap((s) =>
      [...s.text.matchAll(/@Entity\([\s\S]*?export class (\w+)/g)].map((m) => m[1]),
    );
    expect(names).toEqual([...declared].sort());
    expect(names.length).toBeGreaterThanOrEqual(5);
  });
});
