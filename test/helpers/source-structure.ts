import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * The source tree as the structure rules read it: each file's module (its first folder under
 * src/, or the file itself at the top), its text, and the modules its relative imports reach
 * (type-only imports included: a cycle of types is still a cycle).
 */
export interface SourceFile {
  readonly path: string;
  readonly module: string;
  readonly text: string;
  /** The modules its relative imports reach. */
  readonly imports: readonly string[];
  /** The files they reach (paths under src/, without `.ts`). */
  readonly importedFiles: readonly string[];
}

export const SRC = join(__dirname, '..', '..', 'src');
/** The chain emulator's package: its sources. */
export const LOCALNET_SRC = join(__dirname, '..', '..', 'packages', 'localnet', 'src');
/** What the service calls the package. */
export const LOCALNET_PACKAGE = '@stablecoin-billing/localnet';

/** The floor: infrastructure every room stands on, importing none of them. */
export const FLOOR = ['common', 'config', 'database'];

/** Every module under src/, by its place in the house (docs/architecture.md draws it). */
export const MODULES = {
  floor: FLOOR,
  /** Shared machinery above the floor that knows no domain (the outbox loop, the metrics). */
  shared: ['outbox', 'metrics'],
  domain: [
    'auth',
    'billing',
    'checkout',
    'credit-notes',
    'customer-detail',
    'customers',
    'documents',
    'email',
    'events',
    'idempotency',
    'invoices',
    'merchants',
    'payments',
    'plans',
    'portal',
    'refunds',
    'settings',
    'subscriptions',
    'usage',
    'webhooks',
    'x402',
  ],
  /** The chain layer (the chain emulator is a package of its own: packages/localnet). */
  chain: ['solana'],
  /** Entry points and operator surfaces: the CLI, the dev routes, health. */
  edge: ['cli', 'dev', 'health'],
};

export function readSources(root = SRC): SourceFile[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'migrations' ? [] : walk(path);
      return entry.name.endsWith('.ts') ? [path] : [];
    });
  return walk(root).map((path) => {
    const text = readFileSync(path, 'utf8');
    return source(relative(root, path), text, (specifier) =>
      relative(root, join(path, '..', specifier)),
    );
  });
}

/** One file as the rules see it; `resolve` turns a relative specifier into a path under src/. */
export function source(
  path: string,
  text: string,
  resolve: (specifier: string) => string = (s) => s.replace(/^(\.\.?\/)+/, ''),
): SourceFile {
  const importedFiles = [...text.matchAll(/from '(\.[^']+)'/g)].map((m) =>
    resolve(m[1]).split(sep).join('/'),
  );
  return {
    path,
    module: path.split(/[\\/]/)[0],
    text,
    imports: importedFiles.map((f) => f.split('/')[0]),
    importedFiles,
  };
}

const isSpec = (s: SourceFile) => s.path.endsWith('.spec.ts');

/** [file, module] for each import of `from` that reaches a module in `forbidden`. */
export function importsInto(
  sources: readonly SourceFile[],
  from: string,
  forbidden: readonly string[],
): [string, string][] {
  return sources
    .filter((s) => s.module === from && !isSpec(s))
    .flatMap((s) =>
      s.imports.filter((i) => forbidden.includes(i)).map((i): [string, string] => [s.path, i]),
    );
}

/** Modules (folders under src/) not listed in {@link MODULES}. */
export function unlistedModules(sources: readonly SourceFile[]): string[] {
  const listed = new Set(Object.values(MODULES).flat());
  const folders = new Set(sources.filter((s) => /[\\/]/.test(s.path)).map((s) => s.module));
  return [...folders].filter((m) => !listed.has(m)).sort();
}

/** The import cycles between modules (specs aside), each as the modules around it. */
export function moduleCycles(sources: readonly SourceFile[]): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const s of sources) {
    if (isSpec(s)) continue;
    const out = edges.get(s.module) ?? new Set<string>();
    for (const target of s.imports) if (target !== s.module) out.add(target);
    edges.set(s.module, out);
  }
  return cycles(edges);
}

/** The import cycles between files (specs aside), each as the files around it. */
export function fileCycles(sources: readonly SourceFile[]): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const s of sources) {
    if (isSpec(s)) continue;
    edges.set(s.path.replace(/\.ts$/, '').split(sep).join('/'), new Set(s.importedFiles));
  }
  return cycles(edges);
}

/** Strongly connected components of more than one node (Tarjan's algorithm). */
function cycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    order.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, order.get(next)!));
      }
    }
    if (low.get(node) === order.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!order.has(node)) visit(node);
  return found;
}

/** The data layer: `src/database/` and the modules' repositories, where SQL may be written. */
export function isDataLayer(s: SourceFile): boolean {
  const path = s.path.split(sep).join('/');
  return (
    s.module === 'database' || path.endsWith('.repository.ts') || path.includes('/repositories/')
  );
}

/** A file's code without its comments (a comment may name a statement it does not run). */
export function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** SQL as this code writes it: upper-case keywords, as a statement begins. */
const SQL_STATEMENT =
  /\b(?:SELECT\s[\s\S]*?\sFROM\s|INSERT\s+INTO\s|UPDATE\s+[a-z_]+\s+(?:[a-z]\w*\s+)?SET\s|DELETE\s+FROM\s)/;

/** Running SQL or reaching the ORM's connection: the executors and what opens them. */
const EXECUTOR =
  /\b(?:pgQuery|inPgTransaction|withPgSession|forEachBatch|getConnection|getKnex|transactional|EntityManager)\b|\bem\.fork\(|\.execute\s*(?:<[^()]*>)?\(/;

/** Files outside the data layer (specs aside) that hold SQL. */
export function sqlOutsideRepositories(sources: readonly SourceFile[]): string[] {
  return sources
    .filter((s) => !isSpec(s) && !isDataLayer(s) && SQL_STATEMENT.test(code(s.text)))
    .map((s) => s.path.split(sep).join('/'));
}

/** Files outside the data layer (specs aside) that run statements or hold the ORM's manager. */
export function executorsOutsideRepositories(sources: readonly SourceFile[]): string[] {
  return sources
    .filter((s) => !isSpec(s) && !isDataLayer(s) && EXECUTOR.test(code(s.text)))
    .map((s) => s.path.split(sep).join('/'));
}

/**
 * A property set on an HTTP request (`req.user = …`, `(req as X).id = …`): express gives each
 * request a new prototype, and every property added to it afterwards costs ~14 µs of CPU a
 * request. What a request carries lives in `res.locals` (`common/http/request-locals.ts`).
 * `req.body` is the one the framework reads (the body middleware sets it).
 */
const REQUEST_PROPERTY_SET =
  /(?:\b(?:req|request)|\((?:req|request) as [^)]*\))\.(?!body\b)[A-Za-z_$][\w$]*\s*(?:\?\?|\|\||&&)?=(?!=)|Object\.(?:assign|defineProperty)\(\s*(?:req|request)\b/;

/** Files (specs aside) that set a property on an HTTP request. */
export function requestPropertiesSet(sources: readonly SourceFile[]): string[] {
  return sources
    .filter((s) => !isSpec(s) && REQUEST_PROPERTY_SET.test(code(s.text)))
    .map((s) => s.path.split(sep).join('/'));
}

/**
 * Files (specs aside) that take a value from `@pgtyped/runtime`, as `import { sql } from
 * '@pgtyped/runtime'` does: pgtyped's own tag parses its statement when the module loads (~6 ms
 * each). Statements are tagged with `src/database/typed-sql.ts`'s `sql`, parsed on first use;
 * only that file takes pgtyped's, and types may be imported anywhere.
 */
export function eagerStatementTags(sources: readonly SourceFile[]): string[] {
  const VALUE_IMPORT = /import\s+(?!type\b)[^;]*?from\s+'@pgtyped\/runtime'/;
  return sources
    .filter((s) => !isSpec(s) && s.path.split(sep).join('/') !== 'database/typed-sql.ts')
    .filter((s) => {
      const imports = code(s.text).match(new RegExp(VALUE_IMPORT.source, 'g')) ?? [];
      // `import { type A, type B } from` takes no value either.
      return imports.some((i) => !/^import\s*\{(?:\s*type\s+\w+\s*,?)+\s*\}/.test(i));
    })
    .map((s) => s.path.split(sep).join('/'));
}

/**
 * A scheme branch or a chain format: a comparison with a scheme, a branch on one (`if`,
 * `switch`), a scheme's name as a literal, or a memo format (`subscribe:v1:`, `revoke:v1:`,
 * `plan:v1:`). A subscription's scheme is data (`subscriptions.scheme`) that code passes to
 * `ChainPort` as it is; what it means is asked of the port.
 */
const CHAIN_DETAIL =
  /\bscheme\s*[!=]==|[!=]==\s*[\w.]*\bscheme\b|\b(?:if|switch)\s*\(\s*!?[\w.]*\bscheme\s*\)|['"`](?:token-delegate|program)['"`]|\b(?:subscribe|revoke|plan):v\d/;
/**
 * In the data layer (repositories, migrations), where the column's values are written and
 * filtered on in SQL: the scheme's name in a statement is data, not a branch; the rest holds.
 */
const CHAIN_DETAIL_IN_DATA =
  /\bscheme\s*[!=]==|[!=]==\s*[\w.]*\bscheme\b|\b(?:if|switch)\s*\(\s*!?[\w.]*\bscheme\s*\)|\b(?:subscribe|revoke|plan):v\d/;

/**
 * A file's code; in an entity, without its indexes' SQL (`expression:` templates: a partial
 * index's condition on the scheme column is data, as in a migration).
 */
function withoutIndexSql(s: SourceFile): string {
  const text = code(s.text);
  return s.path.split(sep).includes('entities') ? text.replace(/expression:\s*`[^`]*`/g, '') : text;
}

/**
 * Files past `solana/` (specs aside) that branch on the subscription scheme or write a memo
 * format: those belong behind `ChainPort`. `config/` names the schemes (a setting).
 */
export function chainDetailsOutsideSolana(sources: readonly SourceFile[]): string[] {
  return sources
    .filter(
      (s) =>
        !isSpec(s) &&
        s.module !== 'solana' &&
        s.module !== 'config' &&
        (isDataLayer(s) ? CHAIN_DETAIL_IN_DATA : CHAIN_DETAIL).test(withoutIndexSql(s)),
    )
    .map((s) => s.path.split(sep).join('/'));
}

/** The tables a file's SQL reads (`FROM`, `JOIN`) and writes (`INSERT INTO`, `UPDATE`, `DELETE FROM`). */
export function tablesIn(text: string): { reads: string[]; writes: string[] } {
  const found = (pattern: RegExp) =>
    [...new Set([...code(text).matchAll(pattern)].map((m) => m[1]))].sort();
  return {
    reads: found(/\b(?:FROM|JOIN)\s+([a-z][a-z0-9_]*)\b/g),
    writes: found(/\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z][a-z0-9_]*)\b/g),
  };
}

/**
 * SQL on tables past their owners: [file, table, 'writes' | 'reads'] for every statement in a file
 * of one module on a table another module owns, except the reads listed in `allowedReads`
 * (`module:table`, each a join a list needs in one statement; docs/architecture.md says why).
 */
export function tablesPastOwner(
  sources: readonly SourceFile[],
  owners: Readonly<Record<string, string>>,
  allowedReads: readonly string[] = [],
): [string, string, 'reads' | 'writes'][] {
  const out: [string, string, 'reads' | 'writes'][] = [];
  for (const s of sources) {
    if (isSpec(s)) continue;
    const path = s.path.split(sep).join('/');
    const { reads, writes } = tablesIn(s.text);
    for (const table of writes) {
      if (table in owners && owners[table] !== s.module) out.push([path, table, 'writes']);
    }
    for (const table of reads) {
      if (!(table in owners) || owners[table] === s.module) continue;
      if (!allowedReads.includes(`${s.module}:${table}`)) out.push([path, table, 'reads']);
    }
  }
  return out;
}

/**
 * Files that load the localnet package as code (not only its types): a static `import … from`
 * or `require`. A production process must be able to start without it, so the service reaches
 * it only through `import()` in the one file that does (`allowed`).
 */
export function staticLocalnetImports(
  sources: readonly SourceFile[],
  allowed: readonly string[] = [],
): string[] {
  const name = LOCALNET_PACKAGE.replace('/', '\\/');
  const valueImport = new RegExp(
    `import\\s+(?!type\\b)[^;]*?from\\s+'${name}'|require\\(\\s*'${name}'\\s*\\)`,
  );
  const dynamicImport = new RegExp(`import\\(\\s*'${name}'\\s*\\)`);
  return sources
    .filter((s) => !isSpec(s))
    .filter((s) => {
      const path = s.path.split(sep).join('/');
      const text = code(s.text);
      return valueImport.test(text) || (dynamicImport.test(text) && !allowed.includes(path));
    })
    .map((s) => s.path.split(sep).join('/'));
}

/** The package's files whose imports leave the package (into the service's src/, say). */
export function importsLeavingPackage(files: readonly SourceFile[]): string[] {
  return files
    .filter((s) => s.importedFiles.some((f) => f.startsWith('..')))
    .map((s) => s.path.split(sep).join('/'));
}

/**
 * The packages the service's code loads (value imports and requires of bare names, `node:`
 * built-ins aside; type-only imports vanish at compile time), each with the files that load
 * it, that are not in `dependencies`: a production install (`--omit=dev`) would not have them.
 */
export function undeclaredRuntimePackages(
  sources: readonly SourceFile[],
  dependencies: readonly string[],
): [string, string][] {
  const found: [string, string][] = [];
  const pattern =
    /import\s+(?!type\b)[^;]*?from\s+'([^.'][^']*)'|require\(\s*'([^.'][^']*)'\s*\)|^import\s+'([^.'][^']*)'/gm;
  for (const s of sources) {
    if (isSpec(s)) continue;
    for (const m of code(s.text).matchAll(pattern)) {
      const specifier = m[1] ?? m[2] ?? m[3];
      if (specifier.startsWith('node:')) continue;
      const parts = specifier.split('/');
      const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
      if (!dependencies.includes(name)) found.push([s.path.split(sep).join('/'), name]);
    }
  }
  return found;
}
