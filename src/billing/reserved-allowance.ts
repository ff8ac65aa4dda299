import { EntityManager } from '@mikro-orm/postgresql';

/**
 * Token-delegate scheme: what a wallet's live subscriptions in one mint (any merchant's) still
 * need of the one approval they share: each one's share less what it has been charged, less its
 * charges in flight (sent, not settled yet: a landed one has already lowered the on-chain
 * allowance, and counting it twice would make an approval that covers everyone look short).
 *
 * @param before only subscriptions created before this one (they are covered first).
 * @param exceptPlanId leaves out the wallet's subscription to this plan.
 */
export async function reservedAllowance(
  em: EntityManager,
  wallet: string,
  mint: string,
  filter: { before?: { createdAt: Date; id: string }; exceptPlanId?: string } = {},
): Promise<bigint> {
  const params: unknown[] = [wallet, mint];
  let where = '';
  if (filter.before) {
    where += ' AND (s.created_at, s.id) < (?, ?)';
    params.push(filter.before.createdAt, filter.before.id);
  }
  if (filter.exceptPlanId) {
    where += ' AND s.plan_id <> ?';
    params.push(filter.exceptPlanId);
  }
  const [row] = await em.fork().execute<{ total: string }[]>(
    `SELECT COALESCE(SUM(GREATEST(
              s.authorized_amount - s.charged_amount - COALESCE(inflight.amount, 0), 0)), 0)::text AS total
       FROM subscriptions s
       JOIN customers c ON c.id = s.customer_id
       JOIN plans p ON p.id = s.plan_id
       LEFT JOIN LATERAL (
         SELECT SUM(a.amount) AS amount FROM charge_attempts a
          WHERE a.subscription_id = s.id AND a.state = 'sent') inflight ON true
      WHERE c.wallet_address = ? AND p.mint = ? AND s.status IN ('Active', 'PastDue')${where}`,
    params,
  );
  return BigInt(row.total);
}
