import express, { type NextFunction, type Request, type Response, type Router } from 'express';

/** A path segment that matches itself only: no parameter, wildcard, group or escape. */
const LITERAL_SEGMENT = /^[A-Za-z0-9._~-]+$/;

/** How many leading segments of a path choose its group, at most. */
const MAX_KEY_SEGMENTS = 2;

/**
 * Express tries an app's routes one after the other, each a regular expression, in the order
 * the modules declared them: `GET /health/live`, declared last, ran 79 expressions before its
 * own, and every route paid for those declared before it (docs/performance.md). This puts the
 * routes in groups by the literal segments they start with (`/api/customers/...` under
 * `api/customers`, `/health...` under `health`) and replaces them in the app's router with one
 * middleware that hands a request to its group's router, or passes it on when no group's
 * routes could match it. Within a group the routes keep their order, and express's own router
 * runs them (parameters, `HEAD`, `next('route')`, errors), so what a request matches is
 * unchanged: two routes in different groups never match the same path.
 *
 * `OPTIONS` requests skip the groups: express's router answers an `OPTIONS` that no route takes
 * with the methods of the routes whose path matched, but only once its whole stack is exhausted,
 * which the app's not-found handler never lets happen; a group's router would do it on its own.
 * So no route may take `OPTIONS` itself (none does: preflights are answered by middleware).
 *
 * The key has as many segments as the shortest literal start of the routes under its first
 * segment (`/health` and `/health/live` share `health`), at most two. Matching ignores case as
 * express's routes do; a percent-encoded letter matches neither (express does not decode before
 * matching). Called once, after every route is registered and before the not-found handler.
 */
export function groupRoutes(router: Router): void {
  const stack = router.stack;
  const first = stack.findIndex((layer) => layer.route !== undefined);
  if (first === -1) return;
  let end = first;
  while (end < stack.length && stack[end].route !== undefined) end++;
  const stray = stack.slice(end).find((layer) => layer.route !== undefined);
  if (stray) {
    // A middleware between two routes runs for the later ones only: moving them would change that.
    throw new Error(`routes are not contiguous in the router: ${stray.route?.path}`);
  }
  const routes = stack.slice(first, end);
  const options = routes.find((layer) => takesOptions(layer.route));
  if (options) throw new Error(`route ${options.route?.path} takes OPTIONS: it cannot be grouped`);
  const paths = routes.map((layer) => layer.route?.path ?? '');
  const depth = keyDepths(paths);
  const groups = new Map<string, Router>();
  routes.forEach((layer, i) => {
    const key = keyOf(paths[i], depth) ?? '';
    let group = groups.get(key);
    if (!group) groups.set(key, (group = express.Router()));
    group.stack.push(layer);
  });
  const after = stack.splice(first);
  after.splice(0, routes.length);
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'OPTIONS') return next();
    const key = keyOf(req.path, depth);
    const group = key === undefined ? undefined : groups.get(key);
    if (group === undefined) return next();
    group(req, res, next);
  });
  stack.push(...after);
}

/** Whether a route answers `OPTIONS` (declared for it, or for every method). */
function takesOptions(route: unknown): boolean {
  const methods = (route as { methods?: Record<string, boolean> }).methods ?? {};
  return methods.options === true || methods._all === true;
}

/** For each first segment, how many leading segments make the key (see `groupRoutes`). */
function keyDepths(paths: readonly string[]): ReadonlyMap<string, number> {
  const depths = new Map<string, number>();
  for (const path of paths) {
    const segments = literalStart(path);
    if (segments.length === 0) {
      throw new Error(`route ${path} does not start with a literal segment: it cannot be grouped`);
    }
    const depth = Math.min(segments.length, MAX_KEY_SEGMENTS);
    depths.set(segments[0], Math.min(depth, depths.get(segments[0]) ?? depth));
  }
  return depths;
}

/** The literal segments a route's path starts with, lowercased. */
function literalStart(path: string): string[] {
  if (typeof path !== 'string' || !path.startsWith('/')) return [];
  const segments: string[] = [];
  for (const segment of path.slice(1).split('/')) {
    if (!LITERAL_SEGMENT.test(segment)) break;
    segments.push(segment.toLowerCase());
  }
  return segments;
}

/**
 * The group of a path (a request's or a route's): its first segment, and its second when
 * that first segment's routes are keyed by two. Undefined when no route starts that way.
 */
function keyOf(path: string, depths: ReadonlyMap<string, number>): string | undefined {
  const slash = path.indexOf('/', 1);
  const head = (slash === -1 ? path.slice(1) : path.slice(1, slash)).toLowerCase();
  const depth = depths.get(head);
  if (depth === undefined) return undefined;
  if (depth === 1) return head;
  if (slash === -1) return undefined;
  const next = path.indexOf('/', slash + 1);
  return `${head}/${(next === -1 ? path.slice(slash + 1) : path.slice(slash + 1, next)).toLowerCase()}`;
}
