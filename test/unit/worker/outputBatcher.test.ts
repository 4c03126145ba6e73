import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OutputBatcher } from "../../../extension/worker/outputBatcher";
import { Backoff } from "../../../extension/worker/backoff";

/** A sender that records each chunk and succeeds. */
function sendTo(sent: string[], chunk: string): Promise<void> {
  sent.push(chunk);
  return Promise.resolve();
}

describe("OutputBatcher", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function recorder() {
    const sent: string[] = [];
    let release: (() => void) | undefined;
    const send = (chunk: string) => {
      sent.push(chunk);
      return new Promise<void>((resolve) => (release = resolve));
    };
    return { sent, send, finishSend: () => release?.() };
  }

  it("holds a partial line until the flush delay", async () => {
    const r = recorder();
    const b = new OutputBatcher(r.send, { flushDelayMs: 100 });
    b.write("tok");
    b.write("ens");
    await vi.advanceTimersByTimeAsync(99);
    expect(r.sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(r.sent).toEqual(["tokens"]);
  });

  it("sends at once on a newline and coalesces what arrives while a send is in flight", async () => {
    const r = recorder();
    const b = new OutputBatcher(r.send, { flushDelayMs: 100 });
    b.write("line one\n");
    expect(r.sent).toEqual(["line one\n"]);
    b.write("two\n");
    b.write("three\n");
    expect(r.sent).toHaveLength(1);
    r.finishSend();
    await vi.advanceTimersByTimeAsync(0);
    expect(r.sent).toEqual(["line one\n", "two\nthree\n"]);
  });

  it("splits output into chunks no larger than the cap", async () => {
    const sent: string[] = [];
    const b = new OutputBatcher((c) => sendTo(sent, c), { maxChunkBytes: 4 });
    b.write("abcdefghij");
    await b.close();
    expect(sent).toEqual(["abcd", "efgh", "ij"]);
  });

  it("counts the cap in UTF-8 bytes: CJK (3 bytes) and emoji (4 bytes, two UTF-16 units) never pass it, nor is a pair split", async () => {
    const sent: string[] = [];
    const cjk = new OutputBatcher((c) => sendTo(sent, c), { maxChunkBytes: 7 });
    cjk.write("字字字字字");
    await cjk.close();
    expect(sent).toEqual(["字字", "字字", "字"]);
    sent.length = 0;
    const emoji = new OutputBatcher((c) => sendTo(sent, c), { maxChunkBytes: 6 });
    emoji.write("😀😀a😀");
    await emoji.close();
    expect(sent).toEqual(["😀", "😀a", "😀"]);
    expect(sent.every((c) => new TextEncoder().encode(c).length <= 6 && !c.includes("\uFFFD"))).toBe(true);
  });

  it("a chunk full in bytes is sent at once, before the flush delay", () => {
    const r = recorder();
    const b = new OutputBatcher(r.send, { flushDelayMs: 100, maxChunkBytes: 9 });
    b.write("字字字");
    expect(r.sent).toEqual(["字字字"]);
  });

  it("close flushes the rest; discard drops it", async () => {
    const sent: string[] = [];
    const a = new OutputBatcher((c) => sendTo(sent, c));
    a.write("partial");
    await a.close();
    expect(sent).toEqual(["partial"]);
    const b = new OutputBatcher((c) => sendTo(sent, c));
    b.write("dropped");
    b.discard();
    b.write("more\n");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sent).toEqual(["partial"]);
  });

  it("reports a failed send and keeps going", async () => {
    const errors: unknown[] = [];
    const sent: string[] = [];
    let first = true;
    const b = new OutputBatcher(
      (c) => {
        if (first) {
          first = false;
          return Promise.reject(new Error("nope"));
        }
        return sendTo(sent, c);
      },
      { onError: (e) => errors.push(e) },
    );
    b.write("a\n");
    await vi.advanceTimersByTimeAsync(0);
    b.write("b\n");
    await b.close();
    expect(errors).toHaveLength(1);
    expect(sent).toEqual(["b\n"]);
  });
});

describe("Backoff", () => {
  it("grows exponentially with jitter in the upper half, capped", () => {
    const low = new Backoff(100, 1_000, () => 0);
    expect([low.next(), low.next(), low.next(), low.next(), low.next()]).toEqual([50, 100, 200, 400, 500]);
    const high = new Backoff(100, 1_000, () => 1);
    expect([high.next(), high.next(), high.next(), high.next(), high.next()]).toEqual([100, 200, 400, 800, 1_000]);
    high.reset();
    expect(high.next()).toBe(100);
  });
});
