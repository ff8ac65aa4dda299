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
 * recorded only while that reservation's fingerprint is unchanged (`recordTryUnchanged`). pgtyped
 * takes each statement as one static text, so the recording statement holds the reservation's
 * text as a subquery: were the two to drift apart, the fingerprints would never match (every
 * charge deferred) or, worse, match what they should not.
 */
describe('the reservation a charge is judged on and the one it is recorded under', () => {
  it('are the same statement, word for word', () => {
    const reservation = statement('wallet-reservations.repository.ts', 'walletReservation');
    const recording = statement('charge-attempts.repository.ts', 'recordTryUnchanged');
    expect(reservation.startsWith('SELECT ')).toBe(true);
    expect(recording).toContain(`(SELECT w."fingerprint!" FROM ( ${reservation} ) w) =`);
  });
});
