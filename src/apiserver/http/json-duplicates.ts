/**
 * The keys a JSON text sets twice in one object, with their paths
 * (`spec.ports[0].name`), for fieldValidation: kube refuses them under Strict
 * and warns under Warn, where JSON.parse silently keeps the last one.
 *
 * Hand-written because no well-kept library reports duplicate keys short of
 * a second full parse into its own document model (the YAML library's JSON
 * mode costs tens of times JSON.parse). It runs after JSON.parse accepted the
 * text, so it only follows strings and brackets and trusts the syntax.
 */

/** Enough to name the problem; a body with more stops being scanned there. */
const maxReported = 20;

interface ObjectFrame {
  kind: 'object';
  keys: Set<string>;
  key: string | undefined;
  expectKey: boolean;
}

interface ArrayFrame {
  kind: 'array';
  index: number;
}

type Frame = ObjectFrame | ArrayFrame;

const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;
const comma = 0x2c;
const quote = 0x22;
const backslash = 0x5c;

export function duplicateJsonFields(text: string): string[] {
  const duplicates: string[] = [];
  const frames: Frame[] = [];
  for (let i = 0; i < text.length && duplicates.length < maxReported; i++) {
    const code = text.charCodeAt(i);
    const top = frames[frames.length - 1];
    if (code === openBrace) {
      frames.push({ kind: 'object', keys: new Set(), key: undefined, expectKey: true });
    } else if (code === openBracket) {
      frames.push({ kind: 'array', index: 0 });
    } else if (code === closeBrace || code === closeBracket) {
      frames.pop();
    } else if (code === comma && top) {
      if (top.kind === 'array') top.index++;
      else top.expectKey = true;
    } else if (code === quote) {
      const end = closingQuote(text, i);
      if (top?.kind === 'object' && top.expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (top.keys.has(key)) duplicates.push(pathOf(frames.slice(0, -1), key));
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
      i = end;
    }
  }
  return duplicates;
}

function closingQuote(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const candidate = text.indexOf('"', from);
    let escapes = 0;
    while (text.charCodeAt(candidate - 1 - escapes) === backslash) escapes++;
    if (escapes % 2 === 0) return candidate;
    from = candidate + 1;
  }
}

/** `frames` are the containers enclosing the object that holds `key`. */
function pathOf(frames: Frame[], key: string): string {
  let path = '';
  for (const frame of frames) {
    if (frame.kind === 'array') path += `[${frame.index}]`;
    else path += path === '' ? frame.key : `.${frame.key}`;
  }
  return path === '' ? key : `${path}.${key}`;
}
