import { BlockList, isIP } from 'node:net';

/*
 * Addresses a webhook must not reach unless WEBHOOK_ALLOW_PRIVATE_TARGETS is
 * on: everything that is not a public unicast address (IANA special-purpose
 * registries for IPv4 and IPv6).
 */
// Two lists: a BlockList compares an IPv4 address with IPv6 rules as ::ffff:a.b.c.d.
const NON_PUBLIC_V4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  NON_PUBLIC_V4.addSubnet(network, prefix, 'ipv4');
}

/** Global unicast (2000::/3) is the only public IPv6 space; these parts of it are not. */
const GLOBAL_V6 = new BlockList();
GLOBAL_V6.addSubnet('2000::', 3, 'ipv6');
const SPECIAL_V6 = new BlockList();
for (const [network, prefix] of [
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID…)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['3fff::', 20], // documentation
] as const) {
  SPECIAL_V6.addSubnet(network, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address (already known to be one), as eight 16-bit groups. */
function groupsOf(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  // A dotted IPv4 tail (::ffff:1.2.3.4) is the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((group) => parseInt(group, 16)) : [];
  const front = parse(head);
  const back = parse(tail);
  return tail === undefined
    ? front
    : [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * The IPv4 address an IPv6 one stands for: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-translated (::ffff:0:a.b.c.d) or IPv4-compatible (::a.b.c.d, the
 * deprecated ::/96 through which ::7f00:1 reaches 127.0.0.1).
 */
function embeddedV4(groups: number[]): string | undefined {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const translated = zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0;
  if (!mapped && !translated && !zeros(0, 6)) return undefined;
  const [high, low] = [groups[6], groups[7]];
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/**
 * True for a public unicast IPv4 or IPv6 address; false for anything else,
 * including non-addresses. IPv6: 2000::/3 less its special ranges; an IPv6
 * form of an IPv4 address is as public as that address, except the
 * IPv4-compatible ::/96, refused whole (no receiver needs it, and it holds ::
 * and ::1).
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return !NON_PUBLIC_V4.check(address, 'ipv4');
  const groups = groupsOf(address);
  const v4 = embeddedV4(groups);
  if (v4 !== undefined) {
    const compatible = groups.slice(0, 6).every((g) => g === 0);
    return !compatible && !NON_PUBLIC_V4.check(v4, 'ipv4');
  }
  return GLOBAL_V6.check(address, 'ipv6') && !SPECIAL_V6.check(address, 'ipv6');
}
