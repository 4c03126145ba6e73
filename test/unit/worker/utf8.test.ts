import { describe, expect, it } from "vitest";
import { utf8Length, utf8Prefix } from "../../../extension/worker/utf8";

const encoded = (text: string) => new TextEncoder().encode(text).length;

describe("UTF-8 sizes without encoding", () => {
  const samples = ["", "plain ascii", "é ñ ü", "字幕と絵文字", "😀👍🏽🇫🇷", "a\uD800b", "\uDC00", "mixed 字 😀 é"];

  it.each(samples)("utf8Length(%j) is what TextEncoder makes of it", (text) => {
    expect(utf8Length(text)).toBe(encoded(text));
  });

  it.each(samples)("utf8Prefix(%j, n) is the longest start of at most n bytes that splits no pair", (text) => {
    for (let n = 1; n <= encoded(text) + 1; n++) {
      const prefix = utf8Prefix(text, n);
      expect(text.startsWith(prefix)).toBe(true);
      // at least one character, so a sender always makes progress; past that, never over the cap
      const first = text.length > 0 ? String.fromCodePoint(text.codePointAt(0)!) : "";
      if (prefix !== first) expect(encoded(prefix)).toBeLessThanOrEqual(n);
      const next = text.slice(prefix.length);
      if (next.length > 0 && encoded(prefix) > 0) expect(encoded(prefix) + encoded(String.fromCodePoint(next.codePointAt(0)!))).toBeGreaterThan(n);
      const last = prefix.charCodeAt(prefix.length - 1);
      if (last >= 0xd800 && last <= 0xdbff) expect(text.charCodeAt(prefix.length)).not.toBeGreaterThanOrEqual(0xdc00);
    }
  });
});
