import type { LookupAddress } from "node:dns";
import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { createCallbackClient } from "../users/verification-callback.ts";
import {
  canonicalHost,
  guardedLookup,
  hostRefusal,
  isPublicAddress,
  literalRefusal,
  type Resolve,
} from "./callback-address.ts";

describe("isPublicAddress", () => {
  it.each([
    "8.8.8.8",
    "93.184.215.14",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:82a::200e",
    "::ffff:8.8.8.8",
  ])("lets %s through", (a) => {
    expect(isPublicAddress(a)).toBe(true);
  });

  it.each([
    ["loopback", "127.0.0.1"],
    ["loopback, elsewhere in 127/8", "127.255.0.7"],
    ["private 10/8", "10.0.0.5"],
    ["private 172.16/12", "172.31.255.1"],
    ["private 192.168/16", "192.168.1.1"],
    ["link-local (cloud metadata)", "169.254.169.254"],
    ["carrier-grade NAT", "100.64.0.1"],
    ["unspecified", "0.0.0.0"],
    ["this network", "0.1.2.3"],
    ["broadcast", "255.255.255.255"],
    ["multicast", "224.0.0.1"],
    ["documentation", "192.0.2.10"],
    ["benchmarking", "198.18.0.1"],
    ["reserved 240/4", "240.0.0.1"],
    ["IPv6 loopback", "::1"],
    ["IPv6 unspecified", "::"],
    ["IPv6 link-local", "fe80::1"],
    ["IPv6 unique-local", "fd12:3456:789a::1"],
    ["IPv6 multicast", "ff02::1"],
    ["IPv4-mapped loopback", "::ffff:127.0.0.1"],
    ["IPv4-mapped private", "::ffff:10.1.2.3"],
    ["NAT64 of a private address", "64:ff9b::10.0.0.1"],
    ["6to4", "2002:a00:1::1"],
    ["Teredo", "2001::1"],
    ["IPv6 documentation", "2001:db8::1"],
    ["IPv4-compatible loopback", "::127.0.0.1"],
    ["IPv4-compatible of a public address", "::8.8.8.8"],
    ["IPv4-translated loopback", "::ffff:0:7f00:1"],
    ["IPv6 outside global unicast", "4000::1"],
    ["IPv6 discard prefix", "100::1"],
    ["IPv4 as one decimal number", "2130706433"],
    ["IPv4 in hex parts", "0x7f.1"],
    ["IPv4 in octal", "017700000001"],
    ["not an address", "example.com"],
  ])("refuses %s (%s)", (_what, a) => {
    expect(isPublicAddress(a)).toBe(false);
  });
});

describe("literalRefusal", () => {
  it.each([
    "https://127.0.0.1/x",
    "https://[::1]:8443/x",
    "http://10.0.0.5:6379/",
    "https://169.254.169.254/latest/meta-data",
    "https://[::ffff:7f00:1]/x",
    "https://[::127.0.0.1]/x",
    "https://[0:0:0:0:0:ffff:127.0.0.1]/x",
    "https://2130706433/x",
    "https://0x7f.1/x",
    "https://0.0.0.0/",
  ])("refuses the IP literal of %s", (url) => {
    expect(literalRefusal(new URL(url), false)?.message).toMatch(/not a public address/);
    expect(literalRefusal(new URL(url), true)).toBeNull();
  });

  it("leaves names to the lookup and lets public literals through", () => {
    expect(literalRefusal(new URL("https://localhost/x"), false)).toBeNull();
    expect(literalRefusal(new URL("https://8.8.8.8/x"), false)).toBeNull();
  });
});

/** Hostile spellings of this machine and its networks (S26), each refused when a URL is registered. */
const HOSTILE_HOSTS: [string, string][] = [
  ["https://LOCALHOST./hook", "localhost"],
  ["https://localhost../hook", "localhost"],
  ["https://LocalHost/hook", "localhost"],
  ["https://%6c%6fcalhost/hook", "localhost"],
  ["https://api.localhost./hook", "api.localhost"],
  ["https://printer.local/hook", "printer.local"],
  ["https://nas.home.arpa/hook", "nas.home.arpa"],
  ["https://metadata.google.internal/computeMetadata", "metadata.google.internal"],
  ["https://redis/hook", "redis"],
  ["https://[::127.0.0.1]/hook", "::7f00:1"],
  ["https://[::ffff:7f00:1]/hook", "::ffff:7f00:1"],
  ["https://[0:0:0:0:0:ffff:127.0.0.1]/hook", "::ffff:7f00:1"],
  ["https://[::ffff:169.254.169.254]/latest", "::ffff:a9fe:a9fe"],
  ["https://[::ffff:0:7f00:1]/hook", "::ffff:0:7f00:1"],
  ["https://[64:ff9b::a00:1]/hook", "64:ff9b::a00:1"],
  ["https://[2002:7f00:1::1]/hook", "2002:7f00:1::1"],
  ["https://[::1]/hook", "::1"],
  ["https://[0::1]/hook", "::1"],
  ["https://[::]/hook", "::"],
  ["https://[fe80::1]/hook", "fe80::1"],
  ["https://[fd00::1]/hook", "fd00::1"],
  ["https://2130706433/hook", "127.0.0.1"],
  ["https://0x7f.1/hook", "127.0.0.1"],
  ["https://0x7f000001/hook", "127.0.0.1"],
  ["https://017700000001/hook", "127.0.0.1"],
  ["https://0177.0.0.1/hook", "127.0.0.1"],
  ["https://127.1/hook", "127.0.0.1"],
  ["https://127.000.000.001/hook", "127.0.0.1"],
  ["https://127.0.0.1./hook", "127.0.0.1"],
  ["https://0/hook", "0.0.0.0"],
  ["https://0xa9fea9fe/latest", "169.254.169.254"],
  ["https://10.0.0.5:6379/", "10.0.0.5"],
  ["https://１２７.０.０.１/hook", "127.0.0.1"],
];

describe("hostRefusal (registration)", () => {
  it.each(HOSTILE_HOSTS)("refuses %s, judged as %s", (url, host) => {
    expect(canonicalHost(new URL(url))).toBe(host);
    expect(hostRefusal(new URL(url))).toMatch(
      new RegExp(`^${host.replace(/\./g, "\\.")} is (a local name, )?not a public address$`),
    );
  });

  it.each([
    ["https://hooks.example.com/parking", "hooks.example.com"],
    ["https://HOOKS.Example.COM./parking", "hooks.example.com"],
    ["https://8.8.8.8/x", "8.8.8.8"],
    ["https://134744072/x", "8.8.8.8"],
    ["https://[2606:4700:4700::1111]/x", "2606:4700:4700::1111"],
    ["https://[::ffff:8.8.8.8]/x", "::ffff:808:808"],
    ["https://localhost.example.com/x", "localhost.example.com"],
  ])("lets %s through (as %s)", (url, host) => {
    expect(canonicalHost(new URL(url))).toBe(host);
    expect(hostRefusal(new URL(url))).toBeNull();
  });
});

/** A resolver answering from a table, counting its calls. */
function table(answers: Record<string, LookupAddress[][]>): Resolve & { calls: string[] } {
  const calls: string[] = [];
  const fn = ((hostname, callback) => {
    calls.push(hostname);
    const queue = answers[hostname];
    const next = queue && (queue.length > 1 ? queue.shift() : queue[0]);
    if (!next) {
      const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      err.code = "ENOTFOUND";
      callback(err, []);
    } else callback(null, next);
  }) as Resolve & { calls: string[] };
  fn.calls = calls;
  return fn;
}

function lookupOnce(
  lookup: ReturnType<typeof guardedLookup>,
  host: string,
  options: { all?: boolean; family?: number } = {},
): Promise<{ err: Error | null; result: unknown }> {
  return new Promise((resolve) => {
    lookup(
      host,
      options as never,
      ((err: Error | null, address: unknown, family?: number) =>
        resolve({ err, result: options.all ? address : { address, family } })) as never,
    );
  });
}

const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });

describe("guardedLookup", () => {
  it("hands the connection exactly the public addresses it checked", async () => {
    const resolve = table({ "verify.example": [[v4("93.184.215.14"), v6("2606:4700::1")]] });
    const lookup = guardedLookup({ allowPrivate: false, resolve });
    expect(await lookupOnce(lookup, "verify.example")).toEqual({
      err: null,
      result: { address: "93.184.215.14", family: 4 },
    });
    expect(await lookupOnce(lookup, "verify.example", { all: true })).toEqual({
      err: null,
      result: [v4("93.184.215.14"), v6("2606:4700::1")],
    });
    expect(await lookupOnce(lookup, "verify.example", { family: 6 })).toEqual({
      err: null,
      result: { address: "2606:4700::1", family: 6 },
    });
  });

  it("refuses, at connect time, a public-looking name whose DNS answer is private in any spelling", async () => {
    const resolve = table({
      "hooks.example.com": [[v6("::127.0.0.1")]],
      "mapped.example.com": [[v6("::ffff:10.0.0.1")]],
      "LOCALHOST.": [[v4("127.0.0.1")]],
    });
    const lookup = guardedLookup({ allowPrivate: false, resolve });
    expect((await lookupOnce(lookup, "hooks.example.com")).err?.message).toBe(
      "hooks.example.com resolves to ::127.0.0.1, which is not a public address",
    );
    expect((await lookupOnce(lookup, "mapped.example.com")).err?.name).toBe("AddressRefusedError");
    expect((await lookupOnce(lookup, "LOCALHOST.")).err?.name).toBe("AddressRefusedError");
  });

  it("refuses a name when any of its addresses is not public", async () => {
    const resolve = table({ mixed: [[v4("93.184.215.14"), v4("10.0.0.5")]], local: [[v4("127.0.0.1")]] });
    const lookup = guardedLookup({ allowPrivate: false, resolve });
    const mixed = await lookupOnce(lookup, "mixed", { all: true });
    expect(mixed.err?.message).toBe("mixed resolves to 10.0.0.5, which is not a public address");
    expect((await lookupOnce(lookup, "local")).err?.name).toBe("AddressRefusedError");
    expect((await lookupOnce(guardedLookup({ allowPrivate: true, resolve }), "local")).err).toBeNull();
  });

  it("judges each resolution on its own, so a name rebound to a private address is refused at connect", async () => {
    const resolve = table({ rebind: [[v4("93.184.215.14")], [v4("127.0.0.1")]] });
    const lookup = guardedLookup({ allowPrivate: false, resolve });
    expect((await lookupOnce(lookup, "rebind")).result).toEqual({ address: "93.184.215.14", family: 4 });
    expect((await lookupOnce(lookup, "rebind")).err?.name).toBe("AddressRefusedError");
    expect(resolve.calls).toEqual(["rebind", "rebind"]);
  });

  it("passes resolver errors through, and answers ENOTFOUND when no address has the family asked", async () => {
    const lookup = guardedLookup({
      allowPrivate: false,
      resolve: table({ v4only: [[v4("93.184.215.14")]] }),
    });
    expect(((await lookupOnce(lookup, "nowhere")).err as NodeJS.ErrnoException).code).toBe("ENOTFOUND");
    expect(((await lookupOnce(lookup, "v4only", { family: 6 })).err as NodeJS.ErrnoException).code).toBe(
      "ENOTFOUND",
    );
  });
});

describe("the callback client's connection", () => {
  const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
  it("connects to the address its lookup checked, not to what the system would resolve", async () => {
    const seen: IncomingMessage[] = [];
    const server = createServer((req, res) => {
      seen.push(req);
      res.writeHead(204).end();
    }).listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const resolve = table({ "verify.invalid": [[v4("127.0.0.1")]] });
    const client = createCallbackClient({ clock: new FakeClock(), resolve });
    try {
      const url = `http://verify.invalid:${port}/sign-up`;
      const refused = await client.post({
        url,
        payload: {},
        allowPrivateAddresses: false,
        secrets: [SECRET],
        readBody: false,
      });
      expect(refused).toEqual({
        kind: "refused",
        reason: "verify.invalid resolves to 127.0.0.1, which is not a public address",
      });
      expect(seen).toHaveLength(0);
      const answered = await client.post({
        url,
        payload: {},
        allowPrivateAddresses: true,
        secrets: [SECRET],
        readBody: false,
      });
      expect(answered).toMatchObject({ kind: "answered", status: 204 });
      expect(seen[0]?.headers.host).toBe(`verify.invalid:${port}`);
    } finally {
      await client.close();
      server.close();
    }
  });
});
