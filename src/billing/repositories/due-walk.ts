import type { SubscriptionScheme } from '../../config/app-config';

/*
 * Where a charge run's claims walk the due index (`subscriptions_due_idx`: scheme, due time,
 * id), for `claimDueRows`.
 */

/** A due subscription's place in the due index: due time (PostgreSQL's text of it), then id. */
export interface DuePosition {
  due: string;
  id: string;
}

/** A claimed row's place in the due index, and how many candidates its claim walked. */
export interface Walked {
  due_at: string;
  subscription_id: string;
  walked: number;
}

/** Before every due subscription. */
export const FRONT: DuePosition = { due: '-infinity', id: '00000000-0000-0000-0000-000000000000' };

/**
 * A pass starts again from the front at least this often: new subscriptions keep falling due at
 * the end of the index, and a walk that never reached it would leave what it passed behind.
 */
export const PASS_MS = 60_000;

/**
 * Where a run's claims have got to in each scheme's due subscriptions: each claim walks on from
 * the last subscription the one before claimed, not from the front, where the charges under way
 * sit until they settle (read past again by every claim: 150 of the 245 rows a claim read in
 * `npm run bench:engine`). A walk that reaches the end of what is due (fewer candidates than it
 * looked for) goes on from the front (`walkOn`), so whatever it passed (a wallet's siblings, a
 * subscription locked by another claim) is claimed on the next pass, within the same run; a pass
 * older than `PASS_MS` starts again from the front too. A run starts at the front.
 */
export class DueWalk {
  private readonly at = new Map<SubscriptionScheme, { position: DuePosition; since: number }>();

  /** @param now a monotonic clock in ms (tests pass their own). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A walk at the same place, to move on its own (a claim's transaction may be run again). */
  copy(): DueWalk {
    const walk = new DueWalk(this.now);
    for (const [scheme, at] of this.at) walk.at.set(scheme, { ...at });
    return walk;
  }

  /** Takes the place of `walk` (a copy that a committed claim moved). */
  adopt(walk: DueWalk): void {
    this.at.clear();
    for (const [scheme, at] of walk.at) this.at.set(scheme, { ...at });
  }

  /** Where the next claim of `scheme` starts. */
  from(scheme: SubscriptionScheme): DuePosition {
    const at = this.at.get(scheme);
    if (at && this.now() - at.since < PASS_MS) return at.position;
    this.at.delete(scheme);
    return FRONT;
  }

  /**
   * After a claim of `scheme` that looked for `candidates` due subscriptions: `rows`, in due
   * order, each with what the claim walked.
   * @returns whether the walk reached the end of what is due (the next starts from the front).
   */
  moved(scheme: SubscriptionScheme, rows: Walked[], candidates: number): boolean {
    const last = rows.at(-1);
    const ended = !last || last.walked < candidates;
    if (ended) {
      this.at.delete(scheme);
      return true;
    }
    const position = { due: last.due_at, id: last.subscription_id };
    // A pass begins with the claim that started from the front.
    this.at.set(scheme, { position, since: this.at.get(scheme)?.since ?? this.now() });
    return false;
  }
}

/**
 * One scheme's claim of up to `limit` (`claimFrom`, each claimed row with its place and what
 * the walk read), walking on from where the run's last claim of it stopped (`DueWalk`). A walk
 * that reaches the end of what is due goes on from the front in the same claim, for what it
 * passed: a claim finds nothing only when nothing due is claimable. (The first part's charges
 * are open by then, so the second passes their wallets as any claim does.)
 */
export async function walkOn<R extends Walked>(
  walk: DueWalk | undefined,
  scheme: SubscriptionScheme,
  limit: number,
  claimFrom: (from: DuePosition, limit: number) => Promise<{ rows: R[]; candidates: number }>,
): Promise<R[]> {
  const from = walk?.from(scheme) ?? FRONT;
  const first = await claimFrom(from, limit);
  const ended = walk?.moved(scheme, first.rows, first.candidates) ?? true;
  if (from === FRONT || !ended || first.rows.length >= limit) return first.rows;
  const again = await claimFrom(FRONT, limit - first.rows.length);
  walk?.moved(scheme, again.rows, again.candidates);
  return [...first.rows, ...again.rows];
}
