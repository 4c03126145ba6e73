/**
 * Where a completion webhook may point. A client key must not turn the farm's deliveries into a probe of the
 * deployment's own network: loopback, private (RFC 1918, RFC 4193), link-local, CGNAT, cloud metadata,
 * multicast and reserved addresses, the IPv6 forms that reach IPv4 or tunnel (IPv4-mapped and -translated, NAT64
 * local use, 6to4 and Teredo), and names that only mean something inside a network (`localhost`, `*.localhost`,
 * `.local`, `.internal`, single-label names), are refused. The URL parser has already turned decimal, octal and hex
 * IPv4 forms (`http://2130706433/`, `http://0x7f.1/`) into dotted quads, and IPv6 into its compressed form.
 *
 * A public name may still resolve to a private address, or be re-pointed after this check: the delivery (a Node
 * action, webhooks/webhookSend.ts) resolves the name itself, refuses a private answer with `addressRefusal`, and connects
 * to the very address it checked.
 */

/** The deployment's env var that allows every address (self-hosting on a private network, tests). */
export const ALLOW_PRIVATE_ENV = "FARMHAND_WEBHOOK_ALLOW_PRIVATE";

export function privateAddressesAllowed(): boolean {
  return process.env[ALLOW_PRIVATE_ENV] === "1";
}

type V4Range = [base: number, bits: number, what: string];

const V4_REFUSED: V4Range[] = [
  [ip4("0.0.0.0"), 8, "a \"this network\" address"],
  [ip4("10.0.0.0"), 8, "a private address (RFC 1918)"],
  [ip4("100.64.0.0"), 10, "a carrier-grade NAT address (RFC 6598)"],
  [ip4("127.0.0.0"), 8, "a loopback address"],
  [ip4("169.254.169.254"), 32, "a cloud metadata address"],
  [ip4("169.254.0.0"), 16, "a link-local address"],
  [ip4("172.16.0.0"), 12, "a private address (RFC 1918)"],
  [ip4("192.0.0.0"), 24, "an IETF protocol address (RFC 6890)"],
  [ip4("192.168.0.0"), 16, "a private address (RFC 1918)"],
  [ip4("198.18.0.0"), 15, "a benchmarking address (RFC 2544)"],
  [ip4("168.63.129.16"), 32, "a cloud metadata address"],
  [ip4("224.0.0.0"), 4, "a multicast address"],
  [ip4("240.0.0.0"), 4, "a reserved address"],
];

const NAMES_REFUSED = /(^|\.)(localhost|local|internal|home\.arpa|localdomain)$/;

/** Why the farm will not deliver to this URL, or null when it may. Assumes an http(s) URL, already parsed. */
export function webhookAddressRefusal(url: URL): string | null {
  if (url.protocol !== "http:" && url.protocol !== "https:") return `webhooks go to http or https URLs, not ${url.protocol}`;
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (host.startsWith("[")) {
    const what = ip6Refusal(host.slice(1, -1));
    return what ? `${host} is ${what}` : null;
  }
  const v4 = parseIp4(host);
  if (v4 !== null) {
    const what = ip4Refusal(v4);
    return what ? `${host} is ${what}` : null;
  }
  if (NAMES_REFUSED.test(host)) return `${host} names a host on a local or internal network`;
  if (!host.includes(".")) return `${host} is not a public host name (no domain)`;
  return null;
}

/**
 * Why the farm will not connect to this resolved address (dotted IPv4, or IPv6 as a resolver writes it: any case, a
 * dotted IPv4 tail, a zone id), or null when it may.
 */
export function addressRefusal(address: string): string | null {
  const v4 = parseIp4(address);
  if (v4 !== null) return ip4Refusal(v4);
  return ip6Refusal(ip6Text(address));
}

/** An IPv6 address as the URL parser writes it: lower case, no zone id, a dotted IPv4 tail as two hex groups. */
function ip6Text(address: string): string {
  const text = address.toLowerCase().replace(/%.*$/, "");
  const tail = /^(.*:)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(text);
  const v4 = tail ? parseIp4(tail[2]) : null;
  if (!tail || v4 === null) return text;
  return `${tail[1]}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
}

function ip4(text: string): number {
  return parseIp4(text)!;
}

function parseIp4(host: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3];
}

function ip4Refusal(address: number): string | null {
  if (address === 0xffffffff) return "the broadcast address";
  for (const [base, bits, what] of V4_REFUSED) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if ((address & mask) >>> 0 === base) return what;
  }
  return null;
}

/**
 * Eight 16-bit groups, or null when `text` is not an IPv6 address as the URL parser writes it (hex groups,
 * compressed with `::`; it rewrites a dotted IPv4 tail to hex and refuses zone ids).
 */
function parseIp6(text: string): number[] | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const read = (s: string) => (s === "" ? [] : s.split(":").map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const left = read(halves[0]);
  const right = halves.length === 2 ? read(halves[1]) : [];
  const known = left.length + right.length;
  if ([...left, ...right].some(Number.isNaN) || known > 8 || (halves.length === 1 && known !== 8)) return null;
  return [...left, ...new Array<number>(8 - known).fill(0), ...right];
}

function ip6Refusal(text: string): string | null {
  const g = parseIp6(text);
  if (!g) return "not an address the farm can check";
  const first = g[0];
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(8)) return "the unspecified address";
  if (zeros(7) && g[7] === 1) return "a loopback address";
  if (zeros(5) && g[5] === 0xffff) return "an IPv4-mapped address";
  if (zeros(4) && g[4] === 0xffff && g[5] === 0) return "an IPv4-translated address (RFC 2765)";
  if (zeros(6)) return "an IPv4-compatible address";
  if (first === 0x64 && g[1] === 0xff9b && g[2] === 1) return "a local-use NAT64 address (RFC 8215)";
  if (first === 0x2001 && g[1] === 0) return "a Teredo tunnel address (RFC 4380)";
  if (first === 0x64 && g[1] === 0xff9b) {
    // NAT64: the IPv4 address it reaches decides.
    const what = ip4Refusal(((g[6] << 16) >>> 0) + g[7]);
    return what ? `a NAT64 form of ${what}` : null;
  }
  if (first === 0x2002) {
    const what = ip4Refusal(((g[1] << 16) >>> 0) + g[2]);
    return what ? `a 6to4 form of ${what}` : null;
  }
  if (first === 0xfd00 && g[1] === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && g[7] === 0x254) return "a cloud metadata address";
  if ((first & 0xfe00) === 0xfc00) return "a unique local address (RFC 4193)";
  if ((first & 0xffc0) === 0xfe80) return "a link-local address";
  if ((first & 0xffc0) === 0xfec0) return "a site-local address";
  if ((first & 0xff00) === 0xff00) return "a multicast address";
  if (first === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return "a discard-only address (RFC 6666)";
  return null;
}
