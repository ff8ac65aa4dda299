import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { discoverEntities } from '../src/database/entities';

/**
 * The architecture as STYLE.md draws it, checked on the source tree: the floor (common, config,
 * database) knows no room, dependencies between modules point one way, and files stay small
 * enough to read.
 */
const SRC = join(__dirname, '..', 'src');
const DOMAIN = [
  'auth',
  'billing',
  'checkout',
  'customer-detail',
  'customers',
  'dev',
  'email',
  'events',
  'idempotency',
  'invoices',
  'localnet',
  'merchants',
  'plans',
  'settings',
  'solana',
  'subscriptions',
  'webhooks',
];
const MAX_LINES = 450;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : files(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const sources = files(SRC).map((path) => {
  const text = readFileSync(path, 'utf8');
  const module = relative(SRC, path).split(sep)[0];
  const imports = [...text.matchAll(/from '(\.[^']+)'/g)].map((m) => {
    const target = relative(SRC, join(path, '..', m[1]));
    return target.split(sep)[0];
  });
  return { path: relative(SRC, path), module, text, imports };
});

const importsOf = (module: string) =>
  sources.filter((s) => s.module === module).flatMap((s) => s.imports.map((i) => [s.path, i]));

describe('source structure', () => {
  it.each(['common', 'config', 'database'])('%s/ imports no domain module', (floor) => {
    const offending = importsOf(floor).filter(([, target]) => DOMAIN.includes(target));
    expect(offending).toEqual([]);
  });

  it(`no file outside localnet/ is longer than ${MAX_LINES} lines (specs aside)`, () => {
    const long = sources
      .filter((s) => s.module !== 'localnet' && !s.path.endsWith('.spec.ts'))
      .map((s) => [s.path, s.text.split('\n').length] as const)
      .filter(([, lines]) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('localnet is a chain emulator: it imports no domain module but the chain layer', () => {
    const offending = importsOf('localnet').filter(
      ([, target]) => DOMAIN.includes(target) && !['localnet', 'solana'].includes(target),
    );
    expect(offending).toEqual([]);
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
