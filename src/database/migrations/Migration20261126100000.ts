import { Migration } from '@mikro-orm/migrations';

/**
 * `api_time(t)`: a timestamp as the API writes it (ISO 8601 UTC with milliseconds,
 * `2026-11-22T02:29:38.390Z`, DESIGN D5), defined once in the schema so that every statement,
 * typed by pgtyped from its text (which can hold no interpolation), says `api_time(created_at)`.
 * A one-SELECT SQL function declared STABLE (as `to_char` is): the planner inlines it, so it
 * costs what the expression costs.
 */
export class Migration20261126100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create function api_time(t timestamptz) returns text language sql stable parallel safe as 'select to_char(t at time zone ''UTC'', ''YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'')';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop function if exists api_time(timestamptz);`);
  }
}
