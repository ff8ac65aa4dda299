import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ValidationError } from '../common/errors/domain-error';
import { IngestUsageDto } from './dto/usage.dto';
import { parseUsageBatch } from './usage-batch';

const good = {
  id: 'req_1',
  subscriptionId: '0b7d3c1e-8f2a-4c5d-9e6f-1a2b3c4d5e6f',
  meter: 'api_calls',
  quantity: '1.5',
  timestamp: '2026-11-27T10:15:30Z',
};

/** What the DTO (class-validator, the documented rules) says of a body: valid or not. */
const dtoAccepts = (body: object) =>
  validateSync(plainToInstance(IngestUsageDto, body), {
    whitelist: true,
    forbidNonWhitelisted: true,
  }).length === 0;

const parses = (body: unknown) => {
  try {
    parseUsageBatch(body);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return false;
  }
};

describe('parseUsageBatch (the hand-written check of POST /api/usage-events)', () => {
  it.each([
    ['a good event', {}, true],
    ['an offset time with a fraction', { timestamp: '2026-11-27T10:15:30.123+01:00' }, true],
    ['minutes only', { timestamp: '2026-11-27T10:15Z' }, true],
    [
      'a customer instead (checked later: exactly one)',
      { subscriptionId: null, customerId: good.subscriptionId },
      true,
    ],
    ['a whole quantity', { quantity: '1000' }, true],
    ['no offset', { timestamp: '2026-11-27T10:15:30' }, false],
    ['an offset of +14:00', { timestamp: '2026-11-27T10:15:30+14:00' }, true],
    [
      'an offset of +20:00 (none exists; PostgreSQL refuses it)',
      { timestamp: '2026-11-27T10:15:30+20:00' },
      false,
    ],
    ['31 February', { timestamp: '2026-02-31T10:15:30Z' }, false],
    ['29 February of a common year', { timestamp: '2026-02-29T10:15:30Z' }, false],
    ['29 February of a leap year', { timestamp: '2028-02-29T10:15:30Z' }, true],
    ['31 April', { timestamp: '2026-04-31T10:15:30Z' }, false],
    ['month 13', { timestamp: '2026-13-01T10:15:30Z' }, false],
    ['hour 24', { timestamp: '2026-11-27T24:00:00Z' }, false],
    ['a date alone', { timestamp: '2026-11-27' }, false],
    ['not a date', { timestamp: 'yesterday' }, false],
    ['a number for a time', { timestamp: 1764238530 }, false],
    ['quantity 0', { quantity: '0' }, false],
    ['a negative quantity', { quantity: '-1' }, false],
    ['7 decimal places', { quantity: '1.0000001' }, false],
    ['an exponent', { quantity: '1e3' }, false],
    ['a number for a quantity', { quantity: 1 }, false],
    ['an id with a space', { id: 'req 1' }, false],
    ['an empty id', { id: '' }, false],
    ['an id of 101 characters', { id: 'x'.repeat(101) }, false],
    ['a meter in capitals', { meter: 'API' }, false],
    ['a subscription id that is no UUID', { subscriptionId: 'sub_1' }, false],
    ['an unknown field', { extra: 1 }, false],
  ])('%s: the same verdict as the DTO', (_what, change, valid) => {
    const body = { events: [{ ...good, ...change }] };
    expect(parses(body)).toBe(valid);
    expect(dtoAccepts(body)).toBe(valid);
  });

  it.each([
    ['no events', { events: [] }],
    ['1,001 events', { events: Array.from({ length: 1001 }, () => good) }],
    ['events not an array', { events: good }],
    ['an event that is no object', { events: ['x'] }],
    ['a field beside events', { events: [good], more: true }],
  ])('refuses %s, as the DTO does', (_what, body) => {
    expect(parses(body)).toBe(false);
    expect(dtoAccepts(body)).toBe(false);
  });

  it('refuses a body that is not an object, and names at most 20 problems', () => {
    expect(() => parseUsageBatch([good])).toThrow('body: must be a JSON object');
    expect(() => parseUsageBatch(null)).toThrow(ValidationError);
    const bad = { events: Array.from({ length: 100 }, () => ({ ...good, quantity: '0' })) };
    try {
      parseUsageBatch(bad);
      throw new Error('accepted');
    } catch (error) {
      const details = (error as ValidationError).details!;
      expect(details.length).toBe(20);
      expect(details[0]).toEqual({ field: 'events.0.quantity', message: 'must be greater than 0' });
    }
  });

  it('returns the events as given', () => {
    expect(parseUsageBatch({ events: [good] })).toEqual({ events: [good] });
  });
});
