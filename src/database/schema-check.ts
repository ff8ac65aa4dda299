import { Injectable } from '@nestjs/common';
import { Db } from './db';
import { schemaState } from './migrate';

/**
 * Whether this build's migrations are all applied (readiness). Once they are, the answer is kept:
 * a migration is never taken back under a running instance.
 */
@Injectable()
export class SchemaCheck {
  private current = false;

  constructor(private readonly db: Db) {}

  /** The migrations of this build not applied to the database yet (empty: current). */
  async pending(): Promise<readonly string[]> {
    if (this.current) return [];
    const { pending } = await schemaState(
      async (text) => (await this.db.query(text, [])).rows as { name: string }[],
    );
    this.current = pending.length === 0;
    return pending;
  }
}
