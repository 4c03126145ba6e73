/*
 * primes: counts the primes below n with a segmented sieve — the same algorithm, segment size and progress
 * reports as the built-in demo.primes handler (extension/handlers/impl/primes.ts), so the two can be compared.
 *
 * payload: {"n": 1000000}  (a whole number from 0 to 2000000000)
 * result:  {"n": 1000000, "count": 78498}
 */
#include <math.h>
#include <stdint.h>
#include "../common/farmapp.h"

#define PRIMES_MAX_N 2000000000.0
#define SEGMENT (1 << 20)

int main(void) {
  char *input = farm_read_stdin();
  if (!input) {
    fprintf(stderr, "primes: cannot read the job from stdin\n");
    return 2;
  }
  int bad = 0;
  double nn = farm_payload_number(input, "n", -1, &bad);
  free(input);
  if (bad || !(nn >= 0 && nn <= PRIMES_MAX_N && nn == floor(nn))) {
    fprintf(stderr, "primes: needs a payload { n: whole number from 0 to 2000000000 }\n");
    return 2;
  }
  int64_t n = (int64_t)nn;
  int64_t root = (int64_t)floor(sqrt((double)n));

  unsigned char *sieve = malloc((size_t)root + 1);
  int64_t *small = malloc(sizeof(int64_t) * ((size_t)root / 2 + 2));
  unsigned char *segment = malloc(SEGMENT);
  if (!sieve || !small || !segment) {
    fprintf(stderr, "primes: out of memory\n");
    return 3;
  }
  size_t nsmall = 0;
  memset(sieve, 1, (size_t)root + 1);
  for (int64_t i = 2; i <= root; i++) {
    if (!sieve[i]) continue;
    small[nsmall++] = i;
    for (int64_t m = i * i; m <= root; m += i) sieve[m] = 0;
  }

  int64_t count = 0;
  char status[64];
  for (int64_t low = 2; low < n; low += SEGMENT) {
    int64_t high = low + SEGMENT < n ? low + SEGMENT : n;
    memset(segment, 1, (size_t)(high - low));
    for (size_t k = 0; k < nsmall; k++) {
      int64_t p = small[k];
      if (p * p >= high) break;
      int64_t first = (low + p - 1) / p * p;
      int64_t start = p * p > first ? p * p : first;
      for (int64_t m = start; m < high; m += p) segment[m - low] = 0;
    }
    for (int64_t i = 0; i < high - low; i++) count += segment[i];
    snprintf(status, sizeof status, "sieved up to %lld", (long long)high);
    farm_progress((double)(high - 2) / (double)(n - 2 > 1 ? n - 2 : 1), status);
  }
  printf("{\"n\": %lld, \"count\": %lld}\n", (long long)n, (long long)count);
  return 0;
}
