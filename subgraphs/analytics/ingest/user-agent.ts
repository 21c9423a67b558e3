/**
 * What the events table keeps of a User-Agent: whether it is a bot, and browser, OS and device
 * class. A small pattern parser (no UA package is installed), cached per UA string: a site's
 * visitors send few distinct ones.
 */

export type DeviceClass = 'desktop' | 'mobile' | 'tablet';

export interface UserAgentInfo {
  /** Empty, or a crawler, monitor, preview fetcher, headless browser or HTTP library: its events are dropped. */
  bot: boolean;
  browser: string;
  os: string;
  device: DeviceClass;
}

/**
 * Crawlers, link previewers, uptime monitors, audit tools, headless browsers (HeadlessChrome
 * too) and HTTP libraries; "Cubot" phones are not bots. Bare `node` / `undici` (Node's own fetch)
 * are not matched: server-side senders and load tests use them deliberately.
 */
const BOT_PATTERN = new RegExp(
  [
    '(?<!cu)bot', 'crawl', 'spider', 'slurp', 'headless', 'lighthouse', 'pingdom', 'gtmetrix', 'pagespeed', 'uptime', 'python-requests', 'python-urllib',
    'aiohttp', 'httpx', 'scrapy', '^curl', 'curl/', 'wget', 'go-http-client', 'okhttp', 'java/', 'apache-httpclient', 'libwww-perl', 'httpie',
    'postmanruntime', 'insomnia', 'axios/', 'node-fetch', 'guzzlehttp', 'phantomjs', 'selenium', 'webdriver', 'puppeteer', 'playwright',
    'facebookexternalhit', 'facebookcatalog', 'whatsapp', 'embedly', 'quora link preview', 'vkshare', 'w3c_validator', 'feedfetcher',
    'mediapartners-google', 'google-inspectiontool', 'google-read-aloud', 'bingpreview', 'ia_archiver', 'archive\\.org', 'statuscake', 'site24x7',
    'datadog', 'newrelicpinger', 'checkly', 'synthetic', 'prerender',
  ].join('|'),
  'i',
);

const CACHE_LIMIT = 10_000;
const cache = new Map<string, UserAgentInfo>();

/** The UA's class and names, from a per-process cache. */
export function describeUserAgent(userAgent: string): UserAgentInfo {
  let info = cache.get(userAgent);
  if (info) return info;
  info = parseUserAgent(userAgent);
  // Past the limit (a flood of random UAs), start over rather than track recency.
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(userAgent, info);
  return info;
}

export function parseUserAgent(ua: string): UserAgentInfo {
  const trimmed = ua.trim();
  return { bot: trimmed === '' || BOT_PATTERN.test(trimmed), browser: browserOf(trimmed), os: osOf(trimmed), device: deviceOf(trimmed) };
}

function browserOf(ua: string): string {
  if (/Edg(e|A|iOS)?\//.test(ua)) return 'Edge';
  if (/OPR\/|Opera/.test(ua)) return 'Opera';
  if (/SamsungBrowser\//.test(ua)) return 'Samsung Internet';
  if (/YaBrowser\//.test(ua)) return 'Yandex Browser';
  if (/Vivaldi\//.test(ua)) return 'Vivaldi';
  if (/Firefox\/|FxiOS\//.test(ua)) return 'Firefox';
  if (/Chrome\/|CriOS\/|Chromium\//.test(ua)) return 'Chrome';
  if (/Safari\//.test(ua) && /Version\//.test(ua)) return 'Safari';
  if (/MSIE |Trident\//.test(ua)) return 'Internet Explorer';
  return 'Other';
}

function osOf(ua: string): string {
  // Before macOS: iOS UAs say "like Mac OS X".
  if (/iPhone|iPad|iPod/.test(ua)) return 'iOS';
  if (/Windows/.test(ua)) return 'Windows';
  // Before Linux: Android UAs say "Linux; Android".
  if (/Android/.test(ua)) return 'Android';
  if (/CrOS/.test(ua)) return 'ChromeOS';
  if (/Mac OS X|Macintosh/.test(ua)) return 'macOS';
  if (/Linux|X11/.test(ua)) return 'Linux';
  return 'Other';
}

function deviceOf(ua: string): DeviceClass {
  if (/iPad|Tablet|PlayBook|Silk|Kindle/i.test(ua) || (/Android/.test(ua) && !/Mobile/.test(ua))) return 'tablet';
  if (/Mobi|iPhone|iPod|Android|BlackBerry|Opera Mini|IEMobile|Windows Phone/i.test(ua)) return 'mobile';
  return 'desktop';
}
