import { hostAllowed, normalizeDomains } from '../../subgraphs/analytics/ingest/origin';
import { quoteElement, PgArrayLiteral } from '../../subgraphs/analytics/ingest/pg-arrays';
import { readEvents } from '../../subgraphs/analytics/ingest/payload';
import { parseUserAgent } from '../../subgraphs/analytics/ingest/user-agent';

/* The ingestion's pure parts: user agents, domains, payloads, array literals. */

describe('user agents', () => {
  it.each([
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36', 'Chrome', 'Windows', 'desktop'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0', 'Edge', 'Windows', 'desktop'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0', 'Firefox', 'macOS', 'desktop'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15', 'Safari', 'macOS', 'desktop'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1', 'Chrome', 'iOS', 'mobile'],
    ['Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', 'Safari', 'iOS', 'tablet'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36', 'Chrome', 'Android', 'mobile'],
    ['Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Safari/537.36', 'Samsung Internet', 'Android', 'tablet'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 OPR/111.0.0.0', 'Opera', 'Linux', 'desktop'],
    ['Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36', 'Chrome', 'ChromeOS', 'desktop'],
    ['SomethingElse/1.0', 'Other', 'Other', 'desktop'],
  ])('%s', (ua, browser, os, device) => {
    expect(parseUserAgent(ua)).toEqual({ bot: false, browser, os, device });
  });

  it('calls crawlers, monitors, headless browsers, HTTP libraries and the empty UA bots; not Node\'s own fetch', () => {
    for (const ua of ['Googlebot/2.1', 'Mozilla/5.0 (compatible; bingbot/2.0)', 'Baiduspider', 'Yahoo! Slurp', 'HeadlessChrome/126', 'Chrome-Lighthouse', 'python-requests/2.31', 'curl/8.5.0', 'Wget/1.21', 'Go-http-client/1.1', 'okhttp/4.12', 'Apache-HttpClient/4.5', 'axios/1.7.2', 'Pingdom.com_bot', 'facebookexternalhit/1.1', '', '   ']) {
      expect({ ua, bot: parseUserAgent(ua).bot }).toEqual({ ua, bot: true });
    }
    for (const ua of ['node', 'undici', 'Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36']) {
      expect({ ua, bot: parseUserAgent(ua).bot }).toEqual({ ua, bot: false });
    }
  });
});

describe('domains', () => {
  it('normalizes what installations list: case, scheme, port, path, trailing dot', () => {
    expect(normalizeDomains(['Example.COM', 'https://shop.example.com:8443/x', '*.Example.org.', '  localhost ', '', '*.'])).toEqual(['example.com', 'shop.example.com', '*.example.org', 'localhost']);
  });

  it('matches exact hosts, and *.domain on the apex and any depth of subdomain only', () => {
    const domains = normalizeDomains(['example.com', '*.example.org']);
    expect(hostAllowed(domains, 'example.com')).toBe(true);
    expect(hostAllowed(domains, 'www.example.com')).toBe(false);
    expect(hostAllowed(domains, 'example.org')).toBe(true);
    expect(hostAllowed(domains, 'a.b.example.org')).toBe(true);
    expect(hostAllowed(domains, 'notexample.org')).toBe(false);
    expect(hostAllowed(domains, 'example.org.evil.com')).toBe(false);
    expect(hostAllowed(domains, 'localhost')).toBe(false);
  });
});

describe('payloads', () => {
  const now = Date.parse('2030-06-15T12:00:00Z');

  it('splits the url and reads utm parameters; drops the fragment; referrer domain without www, none for the same host', () => {
    const [event] = readEvents('pageview', { url: 'https://shop.example.com/a/b?x=1&utm_campaign=c%20d#frag', referrer: 'https://www.news.example.net/story' }, now);
    expect(event.url).toEqual({ hostname: 'shop.example.com', path: '/a/b', query: 'x=1&utm_campaign=c%20d', utmSource: null, utmMedium: null, utmCampaign: 'c d' });
    expect(event.referrerDomain).toBe('news.example.net');
    const [internal] = readEvents('pageview', { url: 'https://shop.example.com/', referrer: 'https://shop.example.com/prev' }, now);
    expect(internal.referrerDomain).toBeNull();
    expect(internal.url!.query).toBeNull();
  });

  it('keeps ts inside [now − 24 h, now + 5 min], else now', () => {
    const ts = (value: unknown) => readEvents('event', { name: 'x', ts: value }, now)[0].ts;
    expect(ts(now - 23 * 3600_000)).toBe(now - 23 * 3600_000);
    expect(ts(now + 4 * 60_000)).toBe(now + 4 * 60_000);
    expect(ts(now - 25 * 3600_000)).toBe(now);
    expect(ts(now + 6 * 60_000)).toBe(now);
    expect(ts('2030-06-15T11:00:00.000Z')).toBe(now - 3600_000);
    expect(ts(undefined)).toBe(now);
  });
});

describe('array literals', () => {
  it('quotes every text element and escapes only " and \\', () => {
    expect(quoteElement('plain')).toBe('"plain"');
    expect(quoteElement('a "b" \\c {d},e')).toBe('"a \\"b\\" \\\\c {d},e"');
    const literal = new PgArrayLiteral();
    literal.text('x');
    literal.text(null);
    literal.number(1.5);
    literal.quoted(quoteElement('y'));
    expect(String(literal)).toBe('{"x",NULL,1.5,"y"}');
    expect(String(new PgArrayLiteral())).toBe('{}');
  });
});
