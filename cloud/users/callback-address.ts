import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Where an operator's verification callbacks may connect. Only globally routable unicast addresses are
 * reachable, so a callback URL (or a name that resolves, now or later, to such an address) cannot be
 * pointed at the service's own network: loopback, private, link-local (cloud metadata), unique-local,
 * carrier-grade NAT, unspecified, multicast, reserved and documentation ranges, and IPv6 forms that embed
 * an IPv4 address (6to4, Teredo, NAT64), are refused. An IPv4-mapped IPv6 address is judged as its IPv4.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6") {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === "unicast";
  }
  return parsed.range() === "unicast";
}

/** A callback refused because its host is, or resolves to, an address the operator may not reach. */
export class AddressRefusedError extends Error {
  readonly code = "ERR_CALLBACK_ADDRESS_REFUSED";
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(
      host === address
        ? `${address} is not a public address`
        : `${host} resolves to ${address}, which is not a public address`,
    );
    this.name = "AddressRefusedError";
  }
}

/** The host of a URL as net.connect sees it: IPv6 literals without their brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/** An IP literal in a callback URL never reaches a lookup (net.connect skips it), so it is checked here. */
export function literalRefusal(url: URL, allowPrivate: boolean): AddressRefusedError | null {
  const host = hostOf(url);
  if (allowPrivate || isIP(host) === 0 || isPublicAddress(host)) return null;
  return new AddressRefusedError(host, host);
}

/** Resolves a name to all its addresses, like `dns.lookup(name, { all: true })`. */
export type Resolve = (
  hostname: string,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolve: Resolve = (hostname, callback) => dnsLookup(hostname, { all: true }, callback);

/**
 * The `lookup` net.connect uses for callbacks: resolves the name once, refuses it if any of its addresses
 * is not public, and hands net.connect exactly the addresses it checked, so the connection goes where the
 * check looked (no second resolution for DNS rebinding to slip between).
 */
export function guardedLookup(opts: { allowPrivate: boolean; resolve?: Resolve }): LookupFunction {
  const resolve = opts.resolve ?? systemResolve;
  return (hostname, options, callback) => {
    resolve(hostname, (err, found) => {
      if (err) {
        callback(err, "", 4);
        return;
      }
      const family = options.family === 4 || options.family === 6 ? options.family : 0;
      const addresses = family === 0 ? found : found.filter((a) => a.family === family);
      const first = addresses[0];
      if (!first) {
        const none: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
        none.code = "ENOTFOUND";
        callback(none, "", 4);
        return;
      }
      const refused = opts.allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (refused) {
        callback(new AddressRefusedError(hostname, refused.address), "", 4);
        return;
      }
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}
