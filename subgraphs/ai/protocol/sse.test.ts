import { SseParser, parseSse, sseEvent } from './sse';
import { everySplit, randomChunks, rng } from './test-fixtures';

function collect(chunks: Array<Buffer | string>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const p = new SseParser((event, data) => out.push([event, data]));
  for (const c of chunks) p.push(c);
  p.end();
  return out;
}

describe('SseParser', () => {
  it('reads event and data fields, with or without the space after the colon', () => {
    expect(collect(['event: a\ndata: 1\n\nevent:b\ndata:2\n\ndata: 3\n\n'])).toEqual([['a', '1'], ['b', '2'], ['', '3']]);
  });

  it('joins multi-line data with \\n and keeps a second leading space', () => {
    expect(collect(['data: one\ndata:  two\ndata\n\n'])).toEqual([['', 'one\n two\n']]);
  });

  it('ignores comments, id, retry and unknown fields; skips events without data', () => {
    expect(collect([': ping\nid: 7\nretry: 100\nfoo: bar\ndatax: no\n\nevent: only\n\ndata: x\n\n'])).toEqual([['', 'x']]);
  });

  it('accepts CRLF, CR and LF line endings, mixed', () => {
    expect(collect(['event: a\r\ndata: 1\r\n\r\ndata: 2\r\rdata: 3\n\n'])).toEqual([['a', '1'], ['', '2'], ['', '3']]);
  });

  it('treats a CRLF split across chunks as one line ending', () => {
    expect(collect(['event: a\r', '\ndata: 1\r', '\n\r', '\n'])).toEqual([['a', '1']]);
    expect(collect(['data: 1\r', '\r'])).toEqual([['', '1']]);
  });

  it('drops a leading BOM once (a later one makes an unknown field)', () => {
    expect(collect(['\uFEFFdata: 1\n\n\uFEFFdata: 2\n\n'])).toEqual([['', '1']]);
    expect(collect([Buffer.from([0xef]), Buffer.from([0xbb, 0xbf]), 'data: 1\n\n'])).toEqual([['', '1']]);
  });

  it('reassembles UTF-8 split across Buffers', () => {
    const bytes = Buffer.from('event: é\ndata: wörld ✓ 🌍\n\n');
    for (const chunks of everySplit(bytes)) expect(collect(chunks)).toEqual([['é', 'wörld ✓ 🌍']]);
  });

  it('gives the same events for any cut of a longer stream', () => {
    const text = 'event: x\r\ndata: {"a":1}\r\n\r\n: keepalive\n\ndata: a\ndata: b\n\nevent: y\rdata: ü\r\r';
    const want = collect([text]);
    expect(want).toEqual([['x', '{"a":1}'], ['', 'a\nb'], ['y', 'ü']]);
    const rand = rng(1);
    for (let i = 0; i < 300; i++) expect(collect(randomChunks(Buffer.from(text), rand, 5))).toEqual(want);
    for (const chunks of everySplit(Buffer.from(text))) expect(collect(chunks)).toEqual(want);
  });

  it('does not dispatch an event cut before its blank line, and reports it pending', () => {
    const out: string[] = [];
    const p = new SseParser((_e, d) => out.push(d));
    p.push('data: 1\n\ndata: {"half');
    expect(out).toEqual(['1']);
    expect(p.pending).toBe(true);
    p.end();
    expect(out).toEqual(['1']);
    const q = new SseParser(() => undefined);
    q.push('data: 1\n');
    expect(q.pending).toBe(true);
    q.push('\n: comment\n');
    expect(q.pending).toBe(false);
  });

  it('handles long lines arriving a byte at a time', () => {
    const long = 'x'.repeat(20000);
    const chunks = Buffer.from(`data: ${long}\n\n`);
    const out: string[] = [];
    const p = new SseParser((_e, d) => out.push(d));
    for (let i = 0; i < chunks.length; i++) p.push(chunks.subarray(i, i + 1));
    expect(out).toEqual([long]);
  });

  it('parseSse and sseEvent agree', () => {
    expect(parseSse(sseEvent('a', '{"x":1}') + sseEvent(null, '[DONE]'))).toEqual([{ event: 'a', data: '{"x":1}' }, { event: '', data: '[DONE]' }]);
  });
});
