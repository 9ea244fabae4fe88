/**
 * CSV records as Go's encoding/csv reads them (RFC 4180 quoting, blank lines
 * skipped, any number of fields per record), since kube-apiserver reads its
 * token file that way and a file written for it must read the same here.
 */

export interface CsvRecord {
  /** 1-based line on which the record starts, for error messages. */
  line: number;
  fields: string[];
}

export function parseCsv(text: string): CsvRecord[] {
  const cursor = { text, position: 0, line: 1 };
  const records: CsvRecord[] = [];
  while (cursor.position < text.length) {
    if (consumeLineEnd(cursor)) continue;
    const record: CsvRecord = { line: cursor.line, fields: [] };
    for (;;) {
      record.fields.push(text[cursor.position] === '"' ? readQuoted(cursor) : readBare(cursor));
      if (text[cursor.position] !== ',') break;
      cursor.position++;
    }
    consumeLineEnd(cursor);
    records.push(record);
  }
  return records;
}

interface Cursor {
  readonly text: string;
  position: number;
  line: number;
}

function atFieldEnd({ text, position }: Cursor): boolean {
  return position >= text.length || text[position] === ',' || text[position] === '\n' || text.startsWith('\r\n', position);
}

function consumeLineEnd(cursor: Cursor): boolean {
  const length = cursor.text[cursor.position] === '\n' ? 1 : cursor.text.startsWith('\r\n', cursor.position) ? 2 : 0;
  if (length === 0) return false;
  cursor.position += length;
  cursor.line++;
  return true;
}

function readBare(cursor: Cursor): string {
  const start = cursor.position;
  while (!atFieldEnd(cursor)) {
    if (cursor.text[cursor.position] === '"') throw new Error(`line ${cursor.line}: bare " in an unquoted field; quote the field and double the quote`);
    cursor.position++;
  }
  return cursor.text.slice(start, cursor.position);
}

function readQuoted(cursor: Cursor): string {
  const opened = cursor.line;
  let value = '';
  cursor.position++;
  for (;;) {
    const quote = cursor.text.indexOf('"', cursor.position);
    if (quote < 0) throw new Error(`line ${opened}: quoted field is not closed`);
    const chunk = cursor.text.slice(cursor.position, quote);
    value += chunk;
    cursor.line += chunk.split('\n').length - 1;
    cursor.position = quote + 1;
    if (cursor.text[cursor.position] !== '"') break;
    value += '"';
    cursor.position++;
  }
  if (!atFieldEnd(cursor)) throw new Error(`line ${cursor.line}: unexpected text after a closing quote`);
  return value;
}
