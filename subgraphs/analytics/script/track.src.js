// The cookieless tracking script, served minified at GET /v1/analytics/track.js (index.ts next to
// this file). Plain ES2017 for evergreen browsers; at most 2 KB gzipped (test/analytics/browser.test.ts).
// Comments sit on lines of their own: where esbuild is not installed, index.ts drops such lines.
//
// Privacy: no cookies, no localStorage or sessionStorage, no fingerprinting. The server derives the
// visitor from a daily salted hash, so nothing here can follow a browser from one day to the next.
// Do Not Track is not consulted (as Plausible): nothing is stored in the browser, nothing personal
// is collected unless the site itself calls identify(), and browsers have retired the header.
// Bots (headless browsers included) are filtered by the server, on the user agent.
(() => {
  const w = window;
  const d = document;
  const loc = location;
  const nav = navigator;
  const before = w.platformAnalytics;
  // A second copy of the tag on the page: the first one already counts.
  if (before && before.v) return;

  const tag = d.currentScript || d.querySelector('script[data-key]');
  const key = tag && tag.getAttribute('data-key');
  const api = ((tag && tag.getAttribute('data-api')) || (tag ? tag.src.replace(/\/track\.js.*$/, '') : '')).replace(/\/$/, '');
  // A copy of the page opened from disk, or a tag without its key: the API works, nothing is sent.
  const off = !key || loc.protocol === 'file:';
  let userId;
  let lastPath;

  const newId = () => {
    const c = w.crypto;
    // randomUUID exists only in secure contexts (https, localhost).
    return c.randomUUID ? c.randomUUID() : Array.from(c.getRandomValues(new Uint8Array(16)), (b) => (b + 256).toString(16).slice(1)).join('');
  };

  const send = (path, body) => {
    if (off) return;
    const data = Object.assign({ key, id: newId() }, body);
    if (userId) data.userId = userId;
    const url = api + '/' + path;
    const json = JSON.stringify(data);
    // text/plain keeps both a simple CORS request: no preflight.
    try {
      if (nav.sendBeacon && nav.sendBeacon(url, new Blob([json], { type: 'text/plain' }))) return;
    } catch (e) {
      // A refused beacon (policy, size): the fetch below tries once more.
    }
    fetch(url, { method: 'POST', body: json, keepalive: true, credentials: 'omit', headers: { 'content-type': 'text/plain' } }).catch(() => undefined);
  };

  // Routers call replaceState for scroll positions and query filters: one pageview per path.
  const pageview = (force) => {
    if (!force && loc.pathname === lastPath) return;
    lastPath = loc.pathname;
    send('track', { url: loc.href, referrer: d.referrer, screenWidth: screen.width });
  };

  const methods = {
    track: (name, props) => send('event', { name: String(name), props: props || {}, url: loc.href }),
    // identify(null) forgets the user (a sign-out in a single-page app).
    identify: (id, traits) => {
      userId = id == null ? undefined : String(id);
      if (userId) send('identify', { userId, traits: traits || {}, url: loc.href });
    },
    pageview: () => pageview(true),
  };
  const run = (call) => {
    const method = call && methods[call[0]];
    if (method) method.apply(null, Array.prototype.slice.call(call, 1));
  };

  // Calls queued before the script loaded: window.platformAnalytics.q.push(['track', name, props]).
  // Later pushes run at once, so a page may keep using the queue.
  const queued = (before && before.q) || [];
  w.platformAnalytics = Object.assign({ v: 1, q: { push: (...calls) => calls.forEach(run) } }, methods);

  const h = w.history;
  ['pushState', 'replaceState'].forEach((name) => {
    const original = h[name];
    h[name] = function () {
      const result = original.apply(this, arguments);
      pageview();
      return result;
    };
  });
  w.addEventListener('popstate', () => pageview());
  // A page restored from the back-forward cache is seen again without a load.
  w.addEventListener('pageshow', (e) => e.persisted && pageview(true));

  // Queued identify calls first, so the first pageview already carries the user.
  const start = () => {
    queued.forEach((call) => call[0] === 'identify' && run(call));
    pageview();
    queued.forEach((call) => call[0] !== 'identify' && run(call));
  };
  // A prerendered page counts when it is shown, not when it is fetched.
  if (d.prerendering) d.addEventListener('prerenderingchange', start, { once: true });
  else start();
})();
