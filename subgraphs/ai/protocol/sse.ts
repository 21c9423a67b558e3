import { StringDecoder } from 'node:string_decoder';

/**
 * Incremental Server-Sent Events parser (WHATWG rules): lines end with CRLF, LF or CR (a CRLF split
 * across chunks counts once); `event:` and `data:` fields (one optional space after the colon), data
 * lines joined with '\n'; comment lines (':…') and `id`/`retry`/unknown fields ignored; a blank line
 * dispatches the event if it had data; a leading BOM is dropped. UTF-8 sequences split across Buffer
 * chunks are reassembled. An event not closed by a blank line when the stream ends is not dispatched
 * (see `pending`).
 *
 * Events go to a callback (`event` is '' when the event had no `event:` field), so no per-event object
 * is allocated.
 */
export class SseParser {
  private decoder: StringDecoder | null = null;
  /** An unterminated line carried over to the next chunk (never contains CR or LF). */
  private buf = '';
  /** The previous chunk ended with CR: a LF opening the next one belongs to that line ending. */
  private skipLf = false;
  private started = false;
  private eventName = '';
  private data: string | null = null;
  private sawField = false;

  constructor(private readonly onEvent: (event: string, data: string) => void) {}

  push(chunk: Buffer | Uint8Array | string): void {
    let text = typeof chunk === 'string' ? chunk : (this.decoder ??= new StringDecoder('utf8')).write(chunk as Buffer);
    if (text.length === 0) return;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skipLf) {
      this.skipLf = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    // Only the new text can hold line endings: the carried-over part has none.
    const from = this.buf.length;
    if (from > 0) text = this.buf + text;
    const len = text.length;
    let pos = 0;
    let lf = text.indexOf('\n', from);
    let cr = text.indexOf('\r', from);
    while (pos < len) {
      if (lf !== -1 && lf < pos) lf = text.indexOf('\n', pos);
      if (cr !== -1 && cr < pos) cr = text.indexOf('\r', pos);
      let eol: number;
      let next: number;
      if (cr === -1 || (lf !== -1 && lf < cr)) {
        if (lf === -1) break;
        eol = lf;
        next = lf + 1;
      } else {
        eol = cr;
        if (cr + 1 < len) next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
        else {
          next = len;
          this.skipLf = true;
        }
      }
      this.line(text, pos, eol);
      pos = next;
    }
    this.buf = pos === 0 ? text : pos < len ? text.slice(pos) : '';
  }

  /** Ends the stream: flushes the UTF-8 decoder. Anything still undispatched is dropped (see `pending`). */
  end(): void {
    if (this.decoder) {
      const rest = this.decoder.end();
      if (rest) this.buf += rest;
    }
  }

  /** Bytes of an event were received that no blank line has closed yet (a cut stream when at the end). */
  get pending(): boolean {
    return this.buf.length > 0 || this.sawField;
  }

  private line(text: string, start: number, end: number): void {
    if (start === end) {
      const data = this.data;
      const event = this.eventName;
      this.data = null;
      this.eventName = '';
      this.sawField = false;
      if (data !== null) this.onEvent(event, data);
      return;
    }
    const c = text.charCodeAt(start);
    if (c === 58 /* ':' comment */) return;
    if (c === 100 /* d */ && text.startsWith('data', start)) {
      const value = fieldValue(text, start + 4, end);
      if (value === undefined) return;
      this.sawField = true;
      this.data = this.data === null ? value : this.data + '\n' + value;
      return;
    }
    if (c === 101 /* e */ && text.startsWith('event', start)) {
      const value = fieldValue(text, start + 5, end);
      if (value === undefined) return;
      this.sawField = true;
      this.eventName = value;
    }
    // id, retry and unknown fields: ignored.
  }
}

/** The value of a field whose name ends at `p`; undefined when the name continues (another field). */
function fieldValue(text: string, p: number, end: number): string | undefined {
  if (p === end) return '';
  if (text.charCodeAt(p) !== 58) return undefined;
  p++;
  if (p < end && text.charCodeAt(p) === 32) p++;
  return text.slice(p, end);
}

export interface SseEvent {
  event: string;
  data: string;
}

/** Parses a whole SSE text at once (tests, small bodies). */
export function parseSse(text: string | Buffer): SseEvent[] {
  const out: SseEvent[] = [];
  const p = new SseParser((event, data) => out.push({ event, data }));
  p.push(text);
  p.end();
  return out;
}

/** One SSE event as text. `data` must not contain line breaks (JSON.stringify output never does). */
export function sseEvent(event: string | null, data: string): string {
  return event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
}
