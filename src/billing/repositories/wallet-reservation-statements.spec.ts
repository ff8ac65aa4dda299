import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The text of the `sql` statement `name` in `file` (beside this spec), whitespace collapsed. */
function statement(file: string, name: string): string {
  const text = readFileSync(join(__dirname, file), 'utf8');
  const found = new RegExp(`const ${name} = sql<\\w+>\`([^\`]*)\``).exec(text);
  if (!found) throw new Error(`No statement ${name} in ${file}`);
  return found[1].replace(/\s+/g, ' ').trim();
}

/**
 * A token-delegate charge is judged on its wallet's reservation (`walletReservation`) and
 * recorded only while that reservation's fingerprint is unchanged (`recordTries`). pgtyped
 * takes each statement as one static text, so the recording statement holds the reservation's
 * text as a subquery: were the two to drift apart, the fingerprints would never match (every
 * charge deferred) or, worse, match what they should not.
 */
describe('the reservation a charge is judged on and the one it is recorded under', () => {
  it("are the same statement, word for word, its parameters the try's", () => {
    const reservation = statement('wallet-reservations.repository.ts', 'walletReservation');
    const recording = statement('charge-attempt-leases.repository.ts', 'recordTries');
    expect(reservation.startsWith('SELECT ')).toBe(true);
    const perTry = reservation
      .replaceAll('$wallet!', 't.wallet')
      .replaceAll('$mint!', 't.mint')
      .replaceAll('$selfCreatedAt!', 't.self_created_at')
      .replaceAll('$selfId!', 't.subscription_id');
    expect(perTry).not.toContain('$');
    expect(recording).toContain(
      `checked AS MATERIALIZED ( SELECT t.id, t.fingerprint IS NULL OR ` +
        `(SELECT w."fingerprint!" FROM ( ${perTry} ) w) = t.fingerprint AS unchanged FROM t )`,
    );
  });

  it("and the one a claim reads with each attempt, its parameters the attempt's", () => {
    const reservation = statement('wallet-reservations.repository.ts', 'walletReservation');
    const claim = statement('charge-attempt-claims.repository.ts', 'claimDueOneAtATime');
    const perAttempt = reservation
      .replaceAll('$wallet!', 'r.wallet')
      .replaceAll('$mint!', 'r.mint')
      .replaceAll('$selfCreatedAt!', 'r.self_created_at')
      .replaceAll('$selfId!', 'r.self_id');
    expect(perAttempt).not.toContain('$');
    expect(claim).toContain(
      'CROSS JOIN LATERAL (SELECT c.wallet_address AS wallet, a.mint AS mint, ' +
        's.created_at AS self_created_at, s.id AS self_id) r ' +
        `CROSS JOIN LATERAL ( ${perAttempt} ) w`,
    );
  });
});
