import { readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { discoverEntities } from '../src/database/entities';
import {
  chainDetailsOutsideSolana,
  fileCycles,
  importsLeavingPackage,
  LOCALNET_SRC,
  staticLocalnetImports,
  importsInto,
  moduleCycles,
  MODULES,
  readSources,
  source,
  eagerStatementTags,
  executorsOutsideRepositories,
  requestPropertiesSet,
  sqlOutsideRepositories,
  tablesIn,
  tablesPastOwner,
  undeclaredRuntimePackages,
  unlistedModules,
} from './helpers/source-structure';

/** Every table and the module that owns it: its SQL lives in that module's repositories. */
const TABLE_OWNERS: Record<string, string> = {
  api_keys: 'auth',
  merchants: 'merchants',
  idempotency_keys: 'idempotency',
  events: 'events',
  webhook_deliveries: 'webhooks',
  email_outbox: 'email',
  customers: 'customers',
  plans: 'plans',
  invoices: 'invoices',
  invoice_numbers: 'invoices',
  payments: 'payments',
  subscriptions: 'subscriptions',
  subscription_signatures: 'subscriptions',
  charge_attempts: 'billing',
  chain_cursors: 'billing',
  unread_signatures: 'billing',
  receiving_account_alerts: 'billing',
  wallet_approval_versions: 'billing',
  refunds: 'refunds',
  credit_notes: 'credit-notes',
  usage_events: 'usage',
  usage_periods: 'usage',
  x402_settlements: 'x402',
  x402_fee_days: 'x402',
  customer_credits: 'customers',
};

/**
 * The reads past an owner that stay, each a join in one statement of a repository of the module
 * on the left (docs/architecture.md, "Tables and their owners", says why each). Nothing writes
 * past an owner.
 */
const ALLOWED_READS = [
  // The merchant row locked while its keys are counted (two requests, one last slot).
  'auth:merchants',
  // Each event with its latest delivery (the events API).
  'events:webhook_deliveries',
  // Deliveries fan out to merchants with an endpoint, and carry the event's payload.
  'webhooks:events',
  'webhooks:merchants',
  // The customer list's counts; the portal's header (its merchant's name).
  'customers:invoices',
  'customers:subscriptions',
  'customers:merchants',
  // The plan list's subscription counts.
  'plans:subscriptions',
  // An invoice carries its customer; the checkout its merchant; paid-if-covered sums payments.
  'invoices:customers',
  'invoices:merchants',
  'invoices:payments',
  // A subscription carries its plan and customer snapshot; the portal's merchant wallet.
  'subscriptions:plans',
  'subscriptions:customers',
  'subscriptions:merchants',
  // The charge engine: claims, reservations and watchers read what they charge and watch in the
  // statement that locks it (one statement where a service call would be a round trip each).
  'billing:subscriptions',
  'billing:plans',
  'billing:customers',
  'billing:merchants',
  'billing:invoices',
  'billing:payments',
  // Usage decides an event's period from its subscription and plan in the batch's one read.
  'usage:subscriptions',
  'usage:plans',
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

  it('SQL lives only in repositories (and src/database/)', () => {
    expect(sqlOutsideRepositories(sources)).toEqual([]);
  });

  it("statements run, and MikroORM's EntityManager is held, only in repositories and src/database/", () => {
    expect(executorsOutsideRepositories(sources)).toEqual([]);
  });

  it('statements are parsed on first use, not as their module loads (src/database/typed-sql.ts)', () => {
    expect(eagerStatementTags(sources)).toEqual([]);
  });

  it('every table has one owner, whose module holds its entity', () => {
    const tables = sources.flatMap((s) =>
      [...s.text.matchAll(/@Entity\(\{ tableName: '([a-z0-9_]+)' \}\)/g)].map((m) => [
        m[1],
        s.module,
      ]),
    );
    expect(Object.fromEntries(tables)).toEqual(TABLE_OWNERS);
  });

  it("nothing writes past a table's owner; the reads past one are the listed joins", () => {
    expect(tablesPastOwner(sources, TABLE_OWNERS, ALLOWED_READS)).toEqual([]);
    const reads = new Set(
      sources.flatMap((s) => tablesIn(s.text).reads.map((table) => `${s.module}:${table}`)),
    );
    expect(ALLOWED_READS.filter((read) => !reads.has(read))).toEqual([]);
  });

  describe('the rules catch what they are for (planted violations)', () => {
    const tree = (...files: [string, string][]) => files.map(([path, text]) => source(path, text));

    it('the floor importing a room', () => {
      const planted = tree(['common/x.ts', "import { A } from '../billing/a';"]);
      expect(importsInto(planted, 'common', DOMAIN)).toEqual([['common/x.ts', 'billing']]);
    });

    it('a property set on an HTTP request', () => {
      const planted = tree(
        ['auth/guard.ts', 'req.user = user;'],
        ['common/log.ts', '(req as Request & { id?: string }).id = id;'],
        ['portal/guard.ts', 'request.portal = await verify();'],
        ['auth/lazy.ts', 'req.user ??= user;'],
        ['auth/assign.ts', 'Object.assign(req, { user });'],
        ['app.setup.ts', 'if (req.body === undefined) req.body = {};'],
        ['billing/moves.ts', 'if (row.id === request.id) return; // req.user = x in a comment'],
        ['common/locals.ts', 'AUTH.set(res, user);'],
      );
      expect(requestPropertiesSet(planted)).toEqual([
        'auth/guard.ts',
        'common/log.ts',
        'portal/guard.ts',
        'auth/lazy.ts',
        'auth/assign.ts',
      ]);
    });

    it('common importing config', () => {
      const planted = tree(['common/x.ts', "import { AppConfig } from '../config/app-config';"]);
      expect(importsInto(planted, 'common', ['config'])).toEqual([['common/x.ts', 'config']]);
    });

    it('SQL outside a repository, and an executor or the ORM outside one', () => {
      const planted = tree(
        ['email/email-outbox.repository.ts', 'db.execute(`SELECT id FROM email_outbox`)'],
        ['database/db.ts', 'em.getConnection().execute(sql)'],
        ['billing/notices.ts', "const q = `UPDATE email_outbox SET status = 'sent'`;"],
        ['billing/charges.ts', 'await this.db.execute<Row[]>(q, [id]);'],
        ['portal/portal.service.ts', 'constructor(private readonly em: EntityManager) {}'],
        ['plans/plans.service.ts', '// a comment may say SELECT it FROM the table'],
      );
      expect(sqlOutsideRepositories(planted)).toEqual(['billing/notices.ts']);
      expect(executorsOutsideRepositories(planted)).toEqual([
        'billing/charges.ts',
        'portal/portal.service.ts',
      ]);
    });

    it("pgtyped's own tag, which parses a statement as its module loads", () => {
      const planted = tree(
        ['email/a.repository.ts', "import { sql } from '@pgtyped/runtime';"],
        ['email/b.repository.ts', "import { sql as typed } from '@pgtyped/runtime';"],
        ['email/c.ts', "import type { TaggedQuery } from '@pgtyped/runtime';"],
        ['email/d.ts', "import { type IDatabaseConnection } from '@pgtyped/runtime';"],
        ['email/e.repository.ts', "import { sql } from '../database/typed-sql';"],
        ['database/typed-sql.ts', "import { sql as parse } from '@pgtyped/runtime';"],
      );
      expect(eagerStatementTags(planted)).toEqual([
        'email/a.repository.ts',
        'email/b.repository.ts',
      ]);
    });

    it('a scheme branch or a memo format past solana/', () => {
      const planted = tree(
        ['billing/a.ts', "if (this.chain.scheme === 'token-delegate') return;"],
        ['portal/b.ts', "const program = scheme !== 'program';"],
        ['checkout/c.ts', 'const memo = `subscribe:v1:${planId}`;'],
        ['billing/d.ts', "switch (this.chain.scheme) { case 'program': break; }"],
        ['billing/e.ts', 'if (this.chain.approval) return; // token-delegate: an approval'],
        ['solana/schemes/f.ts', "readonly name = 'token-delegate' as const;"],
        ['config/g.ts', "export const SCHEMES = ['program', 'token-delegate'] as const;"],
        ['billing/h.ts', 'if (row.s_scheme !== this.chain.scheme) return;'],
        ['portal/i.ts', 'const shared = this.chain.scheme === row.scheme;'],
        ['billing/j.ts', 'if (!row.scheme) return;'],
        ['billing/k.ts', 'const approval = this.chain.approvalOf(row.scheme);'],
        ['billing/repositories/l.repository.ts', "const q = sql`WHERE s.scheme = 'program'`;"],
        ['billing/repositories/m.repository.ts', "if (scheme === 'program') return q1;"],
        [
          'billing/entities/n.entity.ts',
          '@Index({ expression: `create index i on t (w) where "scheme" = \'token-delegate\'` })',
        ],
        [
          'billing/entities/o.entity.ts',
          "get shared() { return this.scheme === 'token-delegate'; }",
        ],
        ['billing/entities/p.entity.ts', "@Enum({ default: 'token-delegate' }) scheme!: string;"],
      );
      expect(chainDetailsOutsideSolana(planted)).toEqual([
        'billing/a.ts',
        'portal/b.ts',
        'checkout/c.ts',
        'billing/d.ts',
        'billing/h.ts',
        'portal/i.ts',
        'billing/j.ts',
        'billing/repositories/m.repository.ts',
        'billing/entities/o.entity.ts',
        'billing/entities/p.entity.ts',
      ]);
    });

    it('SQL on a table past its owner: any write, and a read not listed', () => {
      const owners = { email_outbox: 'email', invoices: 'invoices' };
      const planted = tree(
        ['email/email-outbox.repository.ts', 'INSERT INTO email_outbox (id) VALUES (?)'],
        ['billing/repositories/a.repository.ts', "UPDATE email_outbox SET status = 'sent'"],
        ['billing/repositories/b.repository.ts', 'SELECT 1 FROM invoices i JOIN email_outbox e'],
        ['portal/portal.repository.ts', 'SELECT id FROM invoices WHERE id = ?'],
      );
      expect(tablesPastOwner(planted, owners, ['billing:invoices'])).toEqual([
        ['billing/repositories/a.repository.ts', 'email_outbox', 'writes'],
        ['billing/repositories/b.repository.ts', 'email_outbox', 'reads'],
        ['portal/portal.repository.ts', 'invoices', 'reads'],
      ]);
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

    it('a package loaded at run time but not a production dependency', () => {
      const planted = tree(
        ['email/a.repository.ts', "import { sql } from '@pgtyped/runtime';"],
        ['email/b.ts', "import type { IQuery } from '@pgtyped/runtime';"],
        ['email/c.ts', "import { readFileSync } from 'node:fs';\nimport pg from 'pg';"],
        ['email/d.ts', "const x = require('lodash/fp');"],
      );
      expect(undeclaredRuntimePackages(planted, ['pg'])).toEqual([
        ['email/a.repository.ts', '@pgtyped/runtime'],
        ['email/d.ts', 'lodash'],
      ]);
    });

    it('a module no one listed', () => {
      expect(unlistedModules(tree(['ledgers/ledgers.service.ts', '']))).toEqual(['ledgers']);
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

  it(`no file is longer than ${MAX_LINES} lines (specs and generated clients aside)`, () => {
    const long = sources
      .filter((s) => !s.path.endsWith('.spec.ts') && !s.path.includes('/generated/'))
      .map((s) => [s.path, s.text.split('\n').length] as const)
      .filter(([, lines]) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('the service loads the localnet package only through import() in dev/embedded-localnet.ts', () => {
    expect(staticLocalnetImports(sources, ['dev/embedded-localnet.ts'])).toEqual([]);
    expect(sources.some((s) => s.module === 'localnet')).toBe(false);
  });

  it('every package the service loads at run time is a production dependency', () => {
    const { dependencies } = JSON.parse(
      readFileSync(join(__dirname, '..', 'package.json'), 'utf8'),
    ) as { dependencies: Record<string, string> };
    // Loaded only by import() on localnet, a development dependency on purpose.
    const devOnly = ['@stablecoin-billing/localnet'];
    expect(
      undeclaredRuntimePackages(
        sources.filter((s) => s.module !== 'checkout' || !s.path.includes('client')),
        [...Object.keys(dependencies), ...devOnly],
      ),
    ).toEqual([]);
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

  it('nothing sets a property on an HTTP request: what a request carries lives in res.locals', () => {
    expect(requestPropertiesSet(sources)).toEqual([]);
  });

  it('every POST route is declared with @IdempotentPost (the Idempotency-Key handling, D15)', () => {
    const bare = sources.filter((s) => /@Post\(/.test(s.text)).map((s) => s.path);
    expect(bare).toEqual([]);
    expect(sources.filter((s) => /@IdempotentPost\(/.test(s.text)).length).toBeGreaterThan(5);
  });

  it('no scheme branch and no memo format past solana/: billing and the portal ask ChainPort', () => {
    expect(chainDetailsOutsideSolana(sources)).toEqual([]);
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
