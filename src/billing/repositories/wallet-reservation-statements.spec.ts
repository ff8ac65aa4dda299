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
 * A token-delegate charge is judged on its wallet's reservation (`walletReservation`, read with
 * each claimed attempt by the claim too) and recorded only while the version of the wallet's
 * approval it was read at is still the wallet's (`recordTries`). pgtyped takes each statement as
 * one static text, so each holds its copy: were they to drift apart, the versions would never
 * match (every charge deferred) or, worse, match what they should not.
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
