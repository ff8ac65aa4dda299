import { loggableUrl } from './logging';

describe('loggableUrl', () => {
  it('redacts an access_token query parameter and keeps the rest', () => {
    expect(loggableUrl('/api/customers?access_token=sbk_secret&search=ada')).toBe(
      '/api/customers?access_token=[redacted]&search=ada',
    );
    expect(loggableUrl('/api/x?search=a&ACCESS_TOKEN=sbk_secret')).toBe(
      '/api/x?search=a&ACCESS_TOKEN=[redacted]',
    );
    expect(loggableUrl('/api/customers?search=ada')).toBe('/api/customers?search=ada');
  });
});
