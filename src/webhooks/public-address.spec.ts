import { describe, expect, it } from 'vitest';
import { isPublicAddress } from './public-address.js';

describe('isPublicAddress', () => {
  it('accepts public unicast addresses, and the IPv6 forms of public IPv4 ones', () => {
    for (const address of [
      '1.1.1.1',
      '8.8.8.8',
      '93.184.215.14',
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '::ffff:8.8.8.8',
      '::ffff:808:808',
      '::ffff:0:8.8.8.8',
    ]) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });

  it('refuses loopback, private, link-local, metadata and other non-public addresses', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '10.255.255.255',
      '172.16.0.1',
      '172.31.255.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.1.2.3',
      'fe80::1',
      'fd00::1',
      'ff02::1',
      'not-an-address',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });

  it('refuses IPv6 outside 2000::/3 or in its special ranges, and every IPv4-compatible or translated form of a refused IPv4', () => {
    for (const address of [
      '::7f00:1', // IPv4-compatible 127.0.0.1
      '::a9fe:a9fe', // IPv4-compatible 169.254.169.254
      '::8.8.8.8', // IPv4-compatible: refused whole
      '::ffff:0:7f00:1', // IPv4-translated 127.0.0.1
      '::ffff:0:10.0.0.1',
      'fec0::1', // site-local
      '64:ff9b::7f00:1', // NAT64
      '100::1', // discard
      '2001:db8::1', // documentation
      '3fff::1', // documentation
      '2002:7f00:1::1', // 6to4
      '2001::1', // Teredo
      '4000::1', // outside 2000::/3
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });
});
