import { Injectable, PipeTransform } from '@nestjs/common';
import { FieldError, ValidationError } from '../common/errors/domain-error';
import { amountProblem, parseAmount } from '../common/money';
import { MAX_DETAILS } from '../common/pipes/validation.pipe';
import { MAX_USAGE_BATCH, type UsageEventDto } from './dto/usage.dto';

const EVENT_ID = /^[\x21-\x7e]{1,100}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const METER = /^[a-z0-9_.-]{1,64}$/;
/** ISO 8601 date and time with an offset (`Z` or `±hh:mm`), as `IsISO8601({strict})` reads it. */
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;
/** Offsets in use run from -12:00 to +14:00: none is 15 hours or more (PostgreSQL's limit). */
const MAX_OFFSET_HOURS = 14;
const FIELDS = new Set(['id', 'subscriptionId', 'customerId', 'meter', 'quantity', 'timestamp']);

/**
 * The body of `POST /api/usage-events`, checked field by field as `IngestUsageDto` declares it
 * (the same rules and messages), by hand: class-transformer and class-validator take ~60 ms of
 * CPU for 1,000 events, four times what the rest of the request costs (docs/performance.md).
 * The route declares its body as this pipe's output (an interface), so the global validation
 * pipe does not check it a second time (it still refuses inherited names, NULs and lone
 * surrogates first).
 */
/** A checked batch: `IngestUsageDto`'s shape (an interface, which no pipe validates again). */
export interface UsageBatch {
  events: UsageEventDto[];
}

@Injectable()
export class UsageBatchPipe implements PipeTransform<unknown, UsageBatch> {
  transform(value: unknown): UsageBatch {
    return parseUsageBatch(value);
  }
}

/** @throws ValidationError listing the first problems (at most `MAX_DETAILS`) */
export function parseUsageBatch(body: unknown): UsageBatch {
  if (!isObject(body)) throw refuse([{ field: 'body', message: 'must be a JSON object' }]);
  const problems: FieldError[] = [];
  for (const key of Object.keys(body)) {
    if (key !== 'events')
      problems.push({ field: key, message: `property ${key} should not exist` });
  }
  const events = body.events;
  if (!Array.isArray(events)) {
    problems.push({ field: 'events', message: 'events must be an array' });
  } else if (events.length < 1 || events.length > MAX_USAGE_BATCH) {
    problems.push({
      field: 'events',
      message: `events must contain 1 to ${MAX_USAGE_BATCH} elements`,
    });
  } else {
    events.forEach((event, i) => checkEvent(event, `events.${i}`, problems));
  }
  if (problems.length > 0) throw refuse(problems);
  return { events: events as UsageEventDto[] };
}

function checkEvent(event: unknown, path: string, problems: FieldError[]): void {
  if (problems.length > MAX_DETAILS) return;
  if (!isObject(event)) {
    problems.push({ field: path, message: 'each event must be an object' });
    return;
  }
  const problem = (name: string, message: string) =>
    problems.push({ field: `${path}.${name}`, message });
  for (const key of Object.keys(event)) {
    if (!FIELDS.has(key)) problem(key, `property ${key} should not exist`);
  }
  const { id, subscriptionId, customerId, meter, quantity, timestamp } = event;
  if (typeof id !== 'string' || !EVENT_ID.test(id)) {
    problem('id', 'must be 1-100 printable ASCII characters');
  }
  if (
    subscriptionId != null &&
    (typeof subscriptionId !== 'string' || !UUID.test(subscriptionId))
  ) {
    problem('subscriptionId', 'subscriptionId must be a UUID');
  }
  if (customerId != null && (typeof customerId !== 'string' || !UUID.test(customerId))) {
    problem('customerId', 'customerId must be a UUID');
  }
  if (typeof meter !== 'string' || !METER.test(meter)) problem('meter', 'must be a meter name');
  const amount = amountProblem(quantity);
  if (amount) problem('quantity', amount.replace('"9.99"', '"1.5"'));
  else if (parseAmount(quantity as string) <= 0n) problem('quantity', 'must be greater than 0');
  if (typeof timestamp !== 'string' || !isTimestamp(timestamp)) {
    problem('timestamp', 'timestamp must be a valid ISO 8601 date string');
  }
}

/** A real date and time: the fields in range (no 31 February), parseable. */
function isTimestamp(value: string): boolean {
  const m = TIMESTAMP.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((v) => Number(v ?? 0));
  const offsetHours = m[7] === undefined ? 0 : Number(m[7]);
  const offsetMinutes = m[8] === undefined ? 0 : Number(m[8]);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= MAX_OFFSET_HOURS &&
    offsetMinutes <= 59
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refuse(problems: FieldError[]): ValidationError {
  const first = problems[0];
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  return new ValidationError(
    `${first.field}: ${first.message}${more}`,
    problems.slice(0, MAX_DETAILS),
  );
}
