/*
 * mandelbrot: renders one tile of the Mandelbrot set and returns it as a PNG (base64).
 *
 * payload: {"x": -0.5, "y": 0, "span": 3, "width": 192, "height": 192, "maxIter": 256}
 *   x, y    the tile's centre in the complex plane
 *   span    the width of the tile in the complex plane (the height follows the pixel aspect)
 *   width, height  pixels, 1..2048 each, and (3 × width + 1) × height at most 196000 bytes of image, so the result
 *           (the PNG, stored uncompressed, in base64) stays under the farm's 256 KiB result cap: 255×255, 320×200
 *           or 400×160 at most, not 256×256;  maxIter  1..100000
 * result:  {"width": 192, "height": 192, "maxIter": 256, "png": "<base64 of the PNG file>"}
 *
 * Progress is printed every few rows. The PNG is written by hand: a zlib stream of stored (uncompressed)
 * deflate blocks, so the app needs nothing beyond libc.
 */
#include <stdint.h>
#include "../common/farmapp.h"

/* The rows of RGB (plus a filter byte each) the PNG stores uncompressed: in base64 with the other fields, this many
 * bytes stays under the farm's 256 KiB result cap (262144 bytes of JSON). */
#define MAX_IMAGE_BYTES 196000.0

static uint32_t crc_table[256];

static void crc_init(void) {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[n] = c;
  }
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *data, size_t len) {
  for (size_t i = 0; i < len; i++) crc = crc_table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

static uint32_t adler32(const unsigned char *data, size_t len) {
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < len; i++) {
    a = (a + data[i]) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

typedef struct {
  unsigned char *bytes;
  size_t len;
} Buffer;

static void put_u32be(Buffer *out, uint32_t v) {
  out->bytes[out->len++] = (unsigned char)(v >> 24);
  out->bytes[out->len++] = (unsigned char)(v >> 16);
  out->bytes[out->len++] = (unsigned char)(v >> 8);
  out->bytes[out->len++] = (unsigned char)v;
}

static void put_chunk(Buffer *out, const char type[4], const unsigned char *data, size_t len) {
  put_u32be(out, (uint32_t)len);
  size_t start = out->len;
  memcpy(out->bytes + out->len, type, 4);
  out->len += 4;
  if (len) memcpy(out->bytes + out->len, data, len);
  out->len += len;
  uint32_t crc = crc32_update(0xFFFFFFFFu, out->bytes + start, len + 4) ^ 0xFFFFFFFFu;
  put_u32be(out, crc);
}

/* zlib stream of stored deflate blocks (at most 65535 bytes each) around `raw`. */
static Buffer zlib_stored(const unsigned char *raw, size_t len) {
  size_t blocks = len / 65535 + 1;
  Buffer z = {malloc(2 + blocks * 5 + len + 4), 0};
  if (!z.bytes) return z;
  z.bytes[z.len++] = 0x78; /* deflate, 32 KiB window */
  z.bytes[z.len++] = 0x01; /* no preset dictionary, fastest; 0x7801 is a multiple of 31 */
  size_t pos = 0;
  do {
    size_t n = len - pos > 65535 ? 65535 : len - pos;
    int final = pos + n == len;
    z.bytes[z.len++] = final ? 1 : 0; /* BFINAL, BTYPE=00 (stored) */
    z.bytes[z.len++] = (unsigned char)(n & 0xff);
    z.bytes[z.len++] = (unsigned char)(n >> 8);
    z.bytes[z.len++] = (unsigned char)(~n & 0xff);
    z.bytes[z.len++] = (unsigned char)((~n >> 8) & 0xff);
    memcpy(z.bytes + z.len, raw + pos, n);
    z.len += n;
    pos += n;
  } while (pos < len);
  put_u32be(&z, adler32(raw, len));
  return z;
}

/* An 8-bit RGB PNG of `rgb` (width*height*3 bytes). */
static Buffer png_encode(const unsigned char *rgb, uint32_t width, uint32_t height) {
  size_t stride = (size_t)width * 3 + 1;
  size_t raw_len = stride * height;
  unsigned char *raw = malloc(raw_len);
  Buffer png = {NULL, 0};
  if (!raw) return png;
  for (uint32_t y = 0; y < height; y++) {
    raw[y * stride] = 0; /* filter: none */
    memcpy(raw + y * stride + 1, rgb + (size_t)y * width * 3, (size_t)width * 3);
  }
  Buffer z = zlib_stored(raw, raw_len);
  free(raw);
  if (!z.bytes) return png;
  png.bytes = malloc(8 + 25 + 12 + z.len + 12);
  if (!png.bytes) { free(z.bytes); return png; }
  static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  memcpy(png.bytes, signature, 8);
  png.len = 8;
  unsigned char ihdr[13];
  Buffer h = {ihdr, 0};
  put_u32be(&h, width);
  put_u32be(&h, height);
  ihdr[8] = 8;  /* bit depth */
  ihdr[9] = 2;  /* colour type: RGB */
  ihdr[10] = 0; /* compression: deflate */
  ihdr[11] = 0; /* filter method */
  ihdr[12] = 0; /* no interlace */
  put_chunk(&png, "IHDR", ihdr, 13);
  put_chunk(&png, "IDAT", z.bytes, z.len);
  put_chunk(&png, "IEND", NULL, 0);
  free(z.bytes);
  return png;
}

static void colour(int iter, int max_iter, unsigned char *px) {
  if (iter >= max_iter) {
    px[0] = px[1] = px[2] = 0;
    return;
  }
  double t = (double)iter / max_iter;
  px[0] = (unsigned char)(9 * (1 - t) * t * t * t * 255);
  px[1] = (unsigned char)(15 * (1 - t) * (1 - t) * t * t * 255);
  px[2] = (unsigned char)(8.5 * (1 - t) * (1 - t) * (1 - t) * t * 255);
}

static int fail(const char *message) {
  fprintf(stderr, "mandelbrot: %s\n", message);
  return 2;
}

int main(void) {
  char *input = farm_read_stdin();
  if (!input) return fail("cannot read the job from stdin");
  int bad = 0;
  double cx = farm_payload_number(input, "x", -0.5, &bad);
  double cy = farm_payload_number(input, "y", 0, &bad);
  double span = farm_payload_number(input, "span", 3, &bad);
  double w = farm_payload_number(input, "width", 192, &bad);
  double h = farm_payload_number(input, "height", 192, &bad);
  double it = farm_payload_number(input, "maxIter", 256, &bad);
  free(input);
  if (bad) return fail("payload fields x, y, span, width, height, maxIter must be numbers");
  if (!(w >= 1 && w <= 2048 && h >= 1 && h <= 2048 && w == (int)w && h == (int)h)) {
    return fail("width and height must be whole numbers from 1 to 2048");
  }
  if ((3 * w + 1) * h > MAX_IMAGE_BYTES) {
    return fail("the PNG would pass the farm's 256 KiB result cap: keep (3 x width + 1) x height at most 196000 (e.g. 255x255, 320x200)");
  }
  if (!(it >= 1 && it <= 100000 && it == (int)it)) return fail("maxIter must be a whole number from 1 to 100000");
  if (!(span > 0)) return fail("span must be positive");
  uint32_t width = (uint32_t)w, height = (uint32_t)h;
  int max_iter = (int)it;

  unsigned char *rgb = malloc((size_t)width * height * 3);
  if (!rgb) return fail("out of memory for the image");
  double step = span / width;
  double left = cx - span / 2, top = cy + step * height / 2;
  uint32_t report_every = height / 20 ? height / 20 : 1;
  char status[64];
  for (uint32_t y = 0; y < height; y++) {
    double ci = top - y * step;
    for (uint32_t x = 0; x < width; x++) {
      double cr = left + x * step, zr = 0, zi = 0;
      int i = 0;
      while (i < max_iter && zr * zr + zi * zi <= 4) {
        double t = zr * zr - zi * zi + cr;
        zi = 2 * zr * zi + ci;
        zr = t;
        i++;
      }
      colour(i, max_iter, rgb + ((size_t)y * width + x) * 3);
    }
    if ((y + 1) % report_every == 0 || y + 1 == height) {
      snprintf(status, sizeof status, "rendered %u of %u rows", y + 1, height);
      farm_progress((double)(y + 1) / height, status);
    }
  }

  crc_init();
  Buffer png = png_encode(rgb, width, height);
  free(rgb);
  if (!png.bytes) return fail("out of memory for the PNG");
  char *encoded = farm_base64(png.bytes, png.len);
  free(png.bytes);
  if (!encoded) return fail("out of memory for the base64 text");
  printf("{\"width\": %u, \"height\": %u, \"maxIter\": %d, \"png\": \"%s\"}\n", width, height, max_iter, encoded);
  free(encoded);
  return 0;
}
