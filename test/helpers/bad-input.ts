import type { TestApp, TestMerchant } from './test-app';

/** A request a careless or hostile client could send, and the answer it must get. */
export interface BadInput {
  name: string;
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  path: string;
  /** A JSON body, or a raw string sent as-is with the given content type. */
  body?: unknown;
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
  status: number;
  code: string;
  /** A field the error's `details` must name. */
  field?: string;
}

/**
 * Sends every row as `m` (the dev routes with the operator's dev key) and returns what went wrong: a status or code other than the row's, no
 * message, a request id other than the response header's, or no detail for the row's field.
 */
export async function badInputFailures(
  t: TestApp,
  m: TestMerchant,
  rows: BadInput[],
): Promise<string[]> {
  const failures: string[] = [];
  for (const row of rows) {
    const auth = row.path.startsWith('/api/dev/') ? t.devAuth : m.auth;
    let req = t.http[row.method](row.path).set(auth);
    for (const [name, value] of Object.entries(row.headers ?? {})) req = req.set(name, value);
    if (row.raw !== undefined)
      req = req.set('Content-Type', row.contentType ?? 'application/json').send(row.raw);
    else if (row.body !== undefined) req = req.send(row.body as object);
    const res = await req;
    const error = res.body?.error;
    const problems = [
      res.status !== row.status && `status ${res.status}`,
      error?.code !== row.code && `code ${error?.code}`,
      typeof error?.message !== 'string' && 'no message',
      error?.requestId !== res.headers['x-request-id'] && 'requestId mismatch',
      row.field &&
        !error?.details?.some((d: { field: string }) => d.field === row.field) &&
        `no detail for ${row.field}`,
    ].filter(Boolean);
    if (problems.length)
      failures.push(`${row.name}: ${problems.join(', ')} ${JSON.stringify(res.body)}`);
  }
  return failures;
}

/** Every row of these tables as one JSON string, to compare before and after. */
export async function tablesSnapshot(t: TestApp, tables: Record<string, string>): Promise<string> {
  const parts = Object.entries(tables).map(
    ([name, from]) => `'${name}', (SELECT json_agg(x ORDER BY id) FROM ${from} x)`,
  );
  const rows = await t.sql<{ s: unknown }>(`SELECT json_build_object(${parts.join(', ')}) AS s`);
  return JSON.stringify(rows[0].s);
}
