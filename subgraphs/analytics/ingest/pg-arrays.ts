/**
 * PostgreSQL array literals (`{"a","b",NULL}`) built as the rows are read, for the writer's
 * `unnest($n::text[])` parameters: one string per column, no intermediate JS array, and no
 * escaping work for the common value that holds neither `"` nor `\` (pg's own serializer runs
 * two regex replaces on every element).
 */
const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/** A text value as an array element: quoted, `"` and `\` escaped. */
export function quoteElement(value: string): string {
  return `"${NEEDS_ESCAPE.test(value) ? value.replace(ESCAPED, '\\$&') : value}"`;
}

/** One column's literal, appended to element by element. */
export class PgArrayLiteral {
  private body = '';
  private empty = true;

  /** Appends a text element (null is SQL NULL). */
  text(value: string | null): void {
    this.element(value === null ? 'NULL' : quoteElement(value));
  }

  /** Appends an element already quoted with quoteElement (values repeated on many rows are quoted once). */
  quoted(element: string | null): void {
    this.element(element ?? 'NULL');
  }

  /** Appends a finite number (null is SQL NULL). */
  number(value: number | null): void {
    this.element(value === null ? 'NULL' : String(value));
  }

  toString(): string {
    return `{${this.body}}`;
  }

  private element(element: string): void {
    if (this.empty) {
      this.body = element;
      this.empty = false;
    } else this.body += `,${element}`;
  }
}
