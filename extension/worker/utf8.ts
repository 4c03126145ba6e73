/** UTF-8 sizes of JavaScript strings (the farm caps output chunks in UTF-8 bytes), without encoding them. */

function charBytes(code: number): number {
  // a lone surrogate is sent as U+FFFD, 3 bytes
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

/** The UTF-8 size of `text`. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.codePointAt(i)!;
    bytes += charBytes(code);
    if (code >= 0x10000) i++;
  }
  return bytes;
}

/** The longest start of `text` of at most `maxBytes` UTF-8 bytes, never splitting a surrogate pair (at least one character). */
export function utf8Prefix(text: string, maxBytes: number): string {
  let bytes = 0;
  let end = 0;
  while (end < text.length) {
    const code = text.codePointAt(end)!;
    const size = charBytes(code);
    if (bytes + size > maxBytes && end > 0) break;
    bytes += size;
    end += code >= 0x10000 ? 2 : 1;
  }
  return text.slice(0, end);
}
