import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

/** IPv6 global unicast (RFC 4291 §2.4): no other IPv6 space reaches a public host. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/**
 * Where an operator's callbacks and webhooks may connect. Only globally routable unicast addresses are
 * reachable, so a callback URL (or a name that resolves, now or later, to such an address) cannot be
 * pointed at the service's own network: loopback, private, link-local (cloud metadata), unique-local,
 * carrier-grade NAT, unspecified, multicast, reserved and documentation ranges, and IPv6 forms that embed
 * an IPv4 address (IPv4-compatible ::a.b.c.d, IPv4-translated, 6to4, Teredo, NAT64), are refused. An
 * IPv4-mapped IPv6 address is judged as its IPv4; any other IPv6 address must be global unicast (2000::/3).
 * IPv4 is read in every form the system resolver accepts (2130706433, 0x7f.1, 017700000001).
 */
export function isPublicAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  if (parsed.kind() === "ipv4") return parsed.range() === "unicast";
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === "unicast";
  return v6.match(GLOBAL_UNICAST_V6) && v6.range() === "unicast";
}

/**
 * An IP address in any spelling, or null. IPv6 goes through WHATWG URL's parser first: ipaddr.js reads a
 * dotted tail as IPv4-mapped whatever precedes it, so `::127.0.0.1` (IPv4-compatible, as the resolver
 * prints it) would pass for `::ffff:127.0.0.1`; URL keeps the two apart and writes hex pieces only.
 */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  let text = address;
  if (address.includes(":")) {
    try {
      text = new URL(`http://[${address}]/`).hostname.slice(1, -1);
    } catch {
      return null;
    }
  }
  return ipaddr.isValid(text) ? ipaddr.parse(text) : null;
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

/**
 * A URL's host as the checks judge it. WHATWG URL parsing already lower-cases it, decodes it and turns
 * every IPv4 spelling of http(s) into dotted decimal (2130706433, 0x7f.1, 017700000001, 127.1); what is
 * left is the IPv6 brackets and the trailing dots of a fully-qualified name (`localhost.` is localhost),
 * and IP literals are written in one canonical form.
 */
export function canonicalHost(url: URL): string {
  const host = hostOf(url).toLowerCase().replace(/\.+$/, "");
  return parseAddress(host)?.toString() ?? host;
}

/**
 * Names that only ever mean this machine or a local network: `localhost` and its subdomains (RFC 6761),
 * mDNS `.local` (RFC 6762), `.home.arpa` (RFC 8375), the private-use `.internal`, and single-label names
 * (found through the resolver's search domains, never in public DNS).
 */
export function isLocalOnlyName(host: string): boolean {
  if (!host.includes(".")) return true;
  return [".localhost", ".local", ".home.arpa", ".internal"].some((suffix) => `.${host}`.endsWith(suffix));
}

/**
 * Why a callback or webhook URL's host may not be registered, or null: an IP literal outside the public
 * unicast ranges, or a local-only name. Other names are resolved and judged again at every connection
 * (`guardedLookup`), since what a name resolves to can change after registration.
 */
export function hostRefusal(url: URL): string | null {
  const host = canonicalHost(url);
  if (parseAddress(host)) return isPublicAddress(host) ? null : `${host} is not a public address`;
  if (isLocalOnlyName(host)) return `${host} is a local name, not a public address`;
  return null;
}

/** An IP literal in a callback URL never reaches a lookup (net.connect skips it), so it is checked here. */
export function literalRefusal(url: URL, allowPrivate: boolean): AddressRefusedError | null {
  const host = canonicalHost(url);
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
