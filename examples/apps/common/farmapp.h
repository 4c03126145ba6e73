/*
 * Helpers for Farmhand apps written in C (WASI preview 1): read the job from stdin, find numbers in its
 * payload, print progress lines, encode base64. Header-only so each app stays one compile command.
 *
 * The protocol: stdin holds one JSON object {"payload": ..., "checkpoint": "<base64>"} ("checkpoint" only when
 * the job resumes). Each stdout line is one of
 *   {"progress": 0.5, "status": "..."}   progress (fraction 0..1 and/or a short text)
 *   {"checkpoint": "<base64>"}           a checkpoint the farm keeps and hands to the next run
 *   anything else                        output, streamed to the submitter
 * and the last line is the result, as JSON. stderr streams as output too.
 */
#ifndef FARMAPP_H
#define FARMAPP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* All of stdin as a NUL-terminated string (NULL when it cannot be read). */
static inline char *farm_read_stdin(void) {
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  if (!buf) return NULL;
  for (;;) {
    if (len + 1 >= cap) {
      cap *= 2;
      char *grown = realloc(buf, cap);
      if (!grown) { free(buf); return NULL; }
      buf = grown;
    }
    size_t n = fread(buf + len, 1, cap - len - 1, stdin);
    if (n == 0) break;
    len += n;
  }
  buf[len] = '\0';
  return buf;
}

/*
 * The number after "key": inside the object that follows "payload":, or `fallback` when the key is absent.
 * A deliberately small scanner (the payload is flat numbers) — not a JSON parser. Sets *bad when the key
 * is there but its value is not a number.
 */
static inline double farm_payload_number(const char *input, const char *key, double fallback, int *bad) {
  const char *payload = strstr(input, "\"payload\"");
  if (!payload) return fallback;
  char pattern[80];
  snprintf(pattern, sizeof pattern, "\"%s\"", key);
  const char *at = strstr(payload, pattern);
  if (!at) return fallback;
  at += strlen(pattern);
  while (*at == ' ' || *at == '\t' || *at == '\n' || *at == '\r') at++;
  if (*at != ':') { *bad = 1; return fallback; }
  at++;
  char *end;
  double value = strtod(at, &end);
  if (end == at) { *bad = 1; return fallback; }
  return value;
}

static inline void farm_progress(double fraction, const char *status) {
  printf("{\"progress\": %.4f, \"status\": \"%s\"}\n", fraction, status);
  fflush(stdout);
}

static const char BASE64_DIGITS[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Standard base64 with padding; the caller frees the NUL-terminated result. */
static inline char *farm_base64(const unsigned char *data, size_t len) {
  char *out = malloc(4 * ((len + 2) / 3) + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len; i += 3) {
    unsigned v = (unsigned)data[i] << 16;
    if (i + 1 < len) v |= (unsigned)data[i + 1] << 8;
    if (i + 2 < len) v |= data[i + 2];
    out[o++] = BASE64_DIGITS[(v >> 18) & 63];
    out[o++] = BASE64_DIGITS[(v >> 12) & 63];
    out[o++] = i + 1 < len ? BASE64_DIGITS[(v >> 6) & 63] : '=';
    out[o++] = i + 2 < len ? BASE64_DIGITS[v & 63] : '=';
  }
  out[o] = '\0';
  return out;
}

#endif
