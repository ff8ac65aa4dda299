import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * The committed openapi.json as a client generator sees it: openapi-typescript generates the
 * types, and a small program using openapi-fetch against them must type-check as written, with
 * no hand edits; a program with wrong calls must not (so the check is not vacuous). No network.
 */
const ROOT = join(__dirname, '..');

describe('a client generated from openapi.json', () => {
  let dir: string;

  beforeAll(() => {
    // Inside the repository, so the program resolves openapi-fetch from node_modules.
    dir = mkdtempSync(join(ROOT, '.openapi-client-'));
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'),
        join(ROOT, 'openapi.json'),
        '--output',
        join(dir, 'schema.d.ts'),
      ],
      { stdio: 'pipe' },
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function diagnostics(source: string): string[] {
    const file = join(dir, `program-${Math.random().toString(36).slice(2)}.ts`);
    writeFileSync(file, source);
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
    });
    return ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }

  const header = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';
const client = createClient<paths>({
  baseUrl: 'http://localhost:3000',
  headers: { Authorization: 'Bearer sbk_example' },
});
`;

  it('type-checks a program that lists, upserts, creates a key without a body and reads errors', () => {
    const errors = diagnostics(
      header +
        `
export async function program(): Promise<void> {
  const list = await client.GET('/api/customers', { params: { query: { search: 'ada' } } });
  if (list.data) {
    const wallet: string = list.data[0].walletAddress;
    const invoices: number = list.data[0]._count.invoices;
    void wallet; void invoices;
  }
  if (list.error) {
    const code: string = list.error.error.code;
    const requestId: string = list.error.error.requestId;
    void code; void requestId;
  }
  const upserted = await client.POST('/api/customers', {
    body: { walletAddress: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin', label: 'Ada' },
  });
  if (upserted.data) { const id: string = upserted.data.id; void id; }
  const key = await client.POST('/api/settings/api-keys', {});
  if (key.data) { const secret: string = key.data.key; void secret; }
  const customer = await client.GET('/api/customers/{id}', { params: { path: { id: 'x' } } });
  void customer;
  const clock = await client.POST('/api/dev/clock/advance', { body: { seconds: 60 } });
  void clock;
  const live = await client.GET('/health/live');
  if (live.data) { const status: string = live.data.status; void status; }
  const error: components['schemas']['ErrorResponseDto'] | undefined = undefined;
  void error;
}
`,
    );
    expect(errors).toEqual([]);
  });

  it('refuses wrong calls: a number for a string, a missing required field, an unknown path', () => {
    const errors = diagnostics(
      header +
        `
export async function wrong(): Promise<void> {
  await client.POST('/api/customers', { body: { walletAddress: 42 } });
  await client.POST('/api/customers', { body: { label: 'no wallet' } });
  await client.GET('/api/nowhere');
  await client.POST('/api/dev/clock/advance', { body: { seconds: '60' } });
}
`,
    );
    expect(errors.length).toBeGreaterThanOrEqual(4);
  });
});
