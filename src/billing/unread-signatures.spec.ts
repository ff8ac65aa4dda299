import { isWarningTry, WARN_AFTER_TRIES } from './unread-signatures';

describe('parked signatures: when one still unsettled is reported', () => {
  it('at 20 tries, then each time the tries double, never before and never in between', () => {
    expect(WARN_AFTER_TRIES).toBe(20);
    const reported = Array.from({ length: 700 }, (_, tries) => tries).filter(isWarningTry);
    expect(reported).toEqual([20, 40, 80, 160, 320, 640]);
  });
});
