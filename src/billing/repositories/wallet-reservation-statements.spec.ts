import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIVE, NEED } from '../../database/migrations/Migration20261207010000';

/** The text of the `sql` statement `name` in `file` (beside this spec), whitespace collapsed. */
function statement(file: string, name: string): string {
  const text = readFileSync(join(__dirname, file), 'utf8');
  const found = new RegExp(`const ${name} = sql<\\w+>\`([^\`]*)\``).exec(text);
  if (!found) throw new Error(`No statement ${name} in ${file}`);
  return found[1].replace(/\s+/g, ' ').trim();
}

/**
 * A token-delegate charge is judged on its wallet's reservation (`walletReservation`; a claim
 * reads the totals kept in the wallet's approval row with each attempt, an upper bound of it)
 * and recorded only while the version of the wallet's approval it was read at is still the
 * wallet's (`recordTries`). pgtyped takes each statement as one static text, so each holds its
 * copy: were they to drift apart, the versions would never match (every charge deferred) or,
 * worse, match what they should not.
 */
describe('the reservation a charge is judged on and the one it is recorded under', () => {
  const version = (wallet: string, mint: string) =>
    `COALESCE((SELECT v.version FROM wallet_approval_versions v ` +
    `WHERE v.wallet = ${wallet} AND v.mint = ${mint}), 0)`;

  it("are read at the same version of the wallet's approval, the recording's parameters the try's", () => {
    const reservation = statement('wallet-reservations.repository.ts', 'walletReservation');
    const recording = statement('charge-attempt-leases.repository.ts', 'recordTries');
    expect(reservation).toContain(`${version('$wallet!', '$mint!')}::text AS "version!"`);
    expect(recording).toContain(
      `checked AS MATERIALIZED ( SELECT t.id, t.version IS NULL OR ` +
        `${version('t.wallet', 't.mint')} = t.version AS unchanged FROM t )`,
    );
  });

  it("and the one a claim reads with each attempt: the attempt's wallet's row, its in-flight test the reservation's", () => {
    const reservation = statement('wallet-reservations.repository.ts', 'walletReservation');
    const claim = statement('charge-attempt-claims.repository.ts', 'claimDueOneAtATime');
    // The version and the kept totals of one row: the claimed subscription's wallet and mint.
    expect(claim).toContain(
      'LEFT JOIN wallet_approval_versions v ON v.wallet = s.wallet AND v.mint = s.mint ) w',
    );
    expect(claim).toContain('COALESCE(v.version, 0)::text AS "version!"');
    // What the claimed subscription holds of the totals is taken off as the triggers count it:
    // live, and its need, as Migration20261207010000 writes them (quotes and case aside).
    const plain = (text: string) => text.replaceAll('"', '').toLowerCase();
    expect(plain(claim)).toContain(`(select ${plain(LIVE('s')).slice(1, -1)} as live) l`);
    expect(plain(claim)).toContain(`case when l.live then ${plain(NEED('s'))} else 0 end`);
    // A charge in flight is what the exact reservation counts as one, found by the same turn.
    const inFlight = "(ia.state = 'sent' OR (ia.state = 'pending' AND ia.signature IS NOT NULL))";
    expect(reservation).toContain(
      `CASE WHEN ia.state = 'sent' OR (ia.state = 'pending' AND ia.signature IS NOT NULL) THEN ia.id END`,
    );
    expect(claim).toContain(
      `(SELECT count(CASE WHEN ia.subscription_id <> s.id AND ${inFlight} THEN 1 END) ` +
        'FROM charge_attempts ia WHERE ia.wallet = s.wallet AND ia.mint = s.mint)::int AS "in_flight!"',
    );
  });
});
