import { lookup } from 'node:dns/promises';
import { Injectable } from '@nestjs/common';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/**
 * Resolves a webhook host name to its addresses, the way the operating
 * system does (getaddrinfo: hosts file, then DNS). One provider shared by the
 * subscription check and the sender, so that the e2e tests can answer in its
 * place: CI has no outside DNS.
 */
@Injectable()
export class HostResolver {
  /** Every address of `host`; rejects when it does not resolve (now). */
  resolve(host: string): Promise<ResolvedAddress[]> {
    return lookup(host, { all: true });
  }
}
