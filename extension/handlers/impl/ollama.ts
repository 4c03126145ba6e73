import { abortReason, HandlerError, messageOf } from "../../worker/errors";
import type { ImplContext } from "../protocol";

export const DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434";

/** `models`: the only models the donor offers (absent: any local model). */
export type OllamaOptions = { url?: string; models?: string[] };

type GeneratePayload = { model: string; prompt: string; system?: string; options?: Record<string, unknown> };
type ChatMessage = { role: string; content: string };
type ChatPayload = { model: string; messages: ChatMessage[]; options?: Record<string, unknown> };

/** ollama.generate: stream a completion from the local Ollama, token by token, as output. */
export async function ollamaGenerate(payload: unknown, ctx: ImplContext, options: unknown): Promise<unknown> {
  const p = checkGenerate(payload);
  checkOffered(p.model, options);
  let response = "";
  const last = await streamNdjson(urlOf(options), "/api/generate", { ...p, stream: true }, ctx, (line) => {
    const token = typeof line.response === "string" ? line.response : "";
    response += token;
    ctx.output(token);
  });
  return { model: p.model, response, ...stats(last) };
}

/** ollama.chat: stream the assistant's reply to a chat from the local Ollama. */
export async function ollamaChat(payload: unknown, ctx: ImplContext, options: unknown): Promise<unknown> {
  const p = checkChat(payload);
  checkOffered(p.model, options);
  let content = "";
  const last = await streamNdjson(urlOf(options), "/api/chat", { ...p, stream: true }, ctx, (line) => {
    const message = line.message as { content?: unknown } | undefined;
    const token = typeof message?.content === "string" ? message.content : "";
    content += token;
    ctx.output(token);
  });
  return { model: p.model, message: { role: "assistant", content }, ...stats(last) };
}

function urlOf(options: unknown): string {
  const url = (options as OllamaOptions | undefined)?.url;
  return (typeof url === "string" && url) || DEFAULT_OLLAMA_URL;
}

/** Whether `model` is one of the `chosen` (lowercase) names; `llama3` and `llama3:latest` name the same model. */
export function offersModel(chosen: readonly string[], model: string): boolean {
  const name = model.toLowerCase();
  const base = name.endsWith(":latest") ? name.slice(0, -":latest".length) : name;
  return chosen.includes(base) || chosen.includes(`${base}:latest`);
}

/** A job may only use a model the donor chose to offer (the extension always passes the choice). */
function checkOffered(model: string, options: unknown): void {
  const models = (options as OllamaOptions | undefined)?.models;
  if (!models || offersModel(models, model)) return;
  // Retryable: another worker may offer this model.
  throw new HandlerError(`this machine does not offer the Ollama model "${model}" (it offers ${models.join(", ")})`);
}

function stats(last: Record<string, unknown> | undefined) {
  const out: Record<string, unknown> = {};
  for (const key of ["done_reason", "eval_count", "prompt_eval_count", "total_duration"]) {
    if (last && last[key] !== undefined) out[key] = last[key];
  }
  return out;
}

async function streamNdjson(
  base: string,
  path: string,
  body: unknown,
  ctx: ImplContext,
  onLine: (line: Record<string, unknown>) => void,
): Promise<Record<string, unknown> | undefined> {
  let res: Response;
  try {
    res = await fetch(new URL(path, base), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: ctx.signal,
    });
  } catch (e) {
    if (ctx.signal.aborted) throw abortReason(ctx.signal);
    throw new HandlerError(`Ollama is not reachable at ${base} (${causeOf(e)}); is it running? Start it with \`ollama serve\``);
  }
  if (!res.ok) {
    const text = (await res.text().catch(() => "")).slice(0, 500);
    const error = safeJson(text)?.error;
    const detail = typeof error === "string" ? error : text;
    const retryable = res.status >= 500 || res.status === 429;
    throw new HandlerError(`Ollama answered ${res.status} for ${path}: ${detail}`, { retryable });
  }
  if (!res.body) throw new HandlerError(`Ollama sent an empty response for ${path}`);
  let last: Record<string, unknown> | undefined;
  let pending = "";
  const decoder = new TextDecoder();
  const handle = (raw: string) => {
    if (!raw.trim()) return;
    const line = safeJson(raw);
    if (!line) throw new HandlerError(`Ollama sent a line that is not JSON: ${raw.slice(0, 200)}`);
    if (typeof line.error === "string") throw new HandlerError(`Ollama error: ${line.error}`);
    onLine(line);
    last = line;
  };
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(bytes, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      handle(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
  }
  handle(pending + decoder.decode());
  if (!last || last.done !== true) throw new HandlerError(`Ollama's stream for ${path} ended before it was done`);
  return last;
}

function safeJson(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function causeOf(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? messageOf(e);
}

function checkGenerate(payload: unknown): GeneratePayload {
  const p = payload as Partial<GeneratePayload> | null;
  if (!p || typeof p.model !== "string" || !p.model || typeof p.prompt !== "string") {
    throw new HandlerError(`ollama.generate needs a payload { model: string, prompt: string }, got ${brief(payload)}`, { retryable: false });
  }
  return { model: p.model, prompt: p.prompt, ...(typeof p.system === "string" ? { system: p.system } : {}), ...(isObject(p.options) ? { options: p.options } : {}) };
}

function checkChat(payload: unknown): ChatPayload {
  const p = payload as Partial<ChatPayload> | null;
  const model = p?.model;
  const messages = p?.messages;
  const ok =
    typeof model === "string" &&
    model !== "" &&
    Array.isArray(messages) &&
    messages.length > 0 &&
    messages.every((m) => m && typeof m.role === "string" && typeof m.content === "string");
  if (!ok) {
    throw new HandlerError(`ollama.chat needs a payload { model: string, messages: [{ role, content }, ...] }, got ${brief(payload)}`, {
      retryable: false,
    });
  }
  return { model, messages: messages.map((m) => ({ role: m.role, content: m.content })), ...(isObject(p?.options) ? { options: p.options } : {}) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function brief(v: unknown): string {
  return (JSON.stringify(v) ?? String(v)).slice(0, 200);
}
