import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { manifestRepository } from "../../cloud/manifest/manifest-repository.ts";
import { whitelistRepository } from "../../cloud/whitelists/whitelist-repository.ts";
import type { CloudHarness } from "../support/cloud-harness.ts";
import { SECRET } from "../support/fixture-site.ts";
import { rawExchange } from "../support/raw-http.ts";
import { type ClientRow, createAuthorizer } from "./credentials.ts";
import { describeRequest, type FuzzRequest, isRecorded, RAW_TWISTS } from "./fuzz-request.ts";
import {
  type OpenApiDocument,
  type Operation,
  pathParamNames,
  readOperations,
} from "./openapi-operations.ts";
import {
  destinationOf,
  type Exchange,
  injectedUrl,
  judge,
  type Violation,
  type ViolationKind,
} from "./oracles.ts";
import { toRawHttp, type WireRequest } from "./raw-request.ts";
import { encodeComponent, requestArbitrary } from "./request-arbitrary.ts";
import type { Hints } from "./schema-arbitrary.ts";

export type FuzzStats = {
  sent: number;
  byTransport: Record<FuzzRequest["transport"], number>;
  statuses: Map<number, number>;
  /** Requests and 2xx answers per destination ("GET /device/v1/devices/{device_id}", "unknown path", …). */
  byDestination: Map<string, { sent: number; ok: number }>;
  credentials: Map<string, number>;
  violations: Record<ViolationKind, number>;
  /** The first few violating exchanges, printable. */
  examples: string[];
};

export type Outcome = { exchange: Exchange; violations: Violation[]; report: string };

export type FuzzTarget = {
  doc: OpenApiDocument;
  operations: Operation[];
  requests: fc.Arbitrary<FuzzRequest>;
  stats: FuzzStats;
  send(req: FuzzRequest): Promise<Outcome>;
};

const MAX_EXAMPLES = 20;
/** Command ids (and the like) kept for later requests to name. */
const RECORDED_CAP = 200;
const NO_RECORD = "00000000-0000-4000-8000-000000000000";
/** Node's limit on a request's head (request line and header fields): more is a 431 from the parser. */
const MAX_HEAD_BYTES = 16 * 1024;
/** What Node accepts in a header value; anything else can only arrive over a socket. */
const INJECTABLE_HEADER = /^[\t\x20-\x7e\x80-\xff]*$/;

function parses(target: string): boolean {
  try {
    injectedUrl(target);
    return true;
  } catch {
    return false;
  }
}

/**
 * Drives the fuzzer against a cloud harness: reads the served OpenAPI document, builds the request
 * arbitrary with the fixture's ids as hints, sends each request (app.inject, or a real socket for a
 * share of them), judges the answer and keeps the figures.
 */
export async function startFuzzTarget(h: CloudHarness, opts: { socketShare: number }): Promise<FuzzTarget> {
  const docRes = await h.app.inject({ method: "GET", url: "/openapi.json" });
  const doc = docRes.json() as OpenApiDocument;
  const operations = readOperations(doc);

  // The fixture's ids of both tenants, as the store holds them after the manifest (whitelists per operator).
  const stored = await manifestRepository(h.db).stored();
  const clients: ClientRow[] = stored.clients.map(({ client_id, operator_id, permissions }) => ({
    client_id,
    operator_id,
    permissions,
  }));
  const idsOf = (rows: { id: string }[]) => rows.map((r) => r.id);
  const locations = idsOf(stored.locations);
  const devices = idsOf(stored.devices);
  const areas = idsOf(stored.publicAreas);
  const lists = whitelistRepository(h.db);
  const whitelists = idsOf(
    (await Promise.all(stored.operators.map((o) => lists.listForOperator(o.id)))).flat(),
  ).sort();

  let port = 0;
  if (opts.socketShare > 0) {
    await h.app.listen({ port: 0, host: "127.0.0.1" });
    port = (h.app.server.address() as AddressInfo).port;
  }

  // Values recorded from answers (command ids), by the path parameter whose template their `uri` matches.
  const recorded = new Map<string, string[]>();
  const recordable = new Set(operations.flatMap((o) => pathParamNames(o.path)));

  const idempotencyKeys = ["fuzz-key-1", "fuzz-key-2", "fuzz-key-3", "fuzz-key-4"];
  const fixture: Record<string, readonly string[]> = {
    id: locations,
    location_id: locations,
    device_id: devices,
    public_area_id: areas,
    whitelist_id: whitelists,
    client_id: clients.map((c) => c.client_id),
    user_id: clients.map((c) => c.client_id),
    client_secret: [SECRET],
    "idempotency-key": idempotencyKeys,
  };
  const anyId = [...locations, ...devices];
  const hints: Hints = (name) => {
    const known = fixture[name];
    const options: { weight: number; arbitrary: fc.Arbitrary<unknown> }[] = [];
    if (known && known.length > 0) options.push({ weight: 4, arbitrary: fc.constantFrom(...known) });
    // Ids only answers reveal (command ids) for a parameter the fixture has none for.
    if (recordable.has(name) && !known)
      options.push({
        weight: 4,
        arbitrary: fc.nat(RECORDED_CAP - 1).map((index) => ({ recorded: name, index })),
      });
    // Another kind of id where this one is expected (a device id as a location id).
    if (recordable.has(name) && anyId.length > 0)
      options.push({ weight: 1, arbitrary: fc.constantFrom(...anyId) });
    return options.length > 0 ? fc.oneof(...options) : undefined;
  };

  const stats: FuzzStats = {
    sent: 0,
    byTransport: { inject: 0, socket: 0 },
    statuses: new Map(),
    byDestination: new Map(),
    credentials: new Map(),
    violations: { "5xx": 0, envelope: 0, "undocumented status": 0, "no answer": 0 },
    examples: [],
  };

  const authorization = createAuthorizer(clients, h.clock);

  function pathOf(req: FuzzRequest): string {
    return req.path
      .map((p) => {
        if (!isRecorded(p)) return p;
        const list = recorded.get(p.recorded) ?? [];
        return encodeComponent(list.length > 0 ? (list[p.index % list.length] ?? NO_RECORD) : NO_RECORD);
      })
      .join("");
  }

  /** Remembers the id of a created object whose `uri` is a documented path with one parameter. */
  function record(body: string) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return;
    }
    const o = parsed as { id?: unknown; uri?: unknown };
    if (typeof o?.id !== "string" || typeof o.uri !== "string") return;
    const dest = destinationOf(operations, "GET", o.uri, "socket");
    const names = dest.kind === "operation" ? pathParamNames(dest.op.path) : [];
    const [name] = names;
    if (names.length !== 1 || name === undefined) return;
    const list = recorded.get(name) ?? [];
    if (list.includes(o.id)) return;
    list.push(o.id);
    if (list.length > RECORDED_CAP) list.shift();
    recorded.set(name, list);
  }

  async function exchange(
    req: FuzzRequest,
    wire: WireRequest,
    transport: FuzzRequest["transport"],
  ): Promise<Omit<Exchange, "method" | "target" | "sentCorrelationId">> {
    const headers = { ...wire.headers };
    if (wire.body?.contentType != null) headers["content-type"] = wire.body.contentType;
    if (transport === "inject") {
      const res = await h.app.inject({
        method: wire.method as "GET",
        url: wire.target,
        headers,
        ...(wire.body ? { payload: wire.body.text } : {}),
        remoteAddress: req.remoteAddress,
      });
      return { transport, broken: false, status: res.statusCode, headers: res.headers, body: res.body };
    }
    const twist = req.transport === "socket" ? req.twist : "none";
    const bytes = toRawHttp(wire, twist);
    const res = await rawExchange(port, (s) => s.write(bytes), { giveUpMs: 10_000 });
    // Bytes the HTTP grammar does not allow in a header value or the request target, or a head near
    // Node's 16 KiB limit: the parser may refuse them before there is a request (or a correlation id).
    const broken =
      RAW_TWISTS[twist] ||
      !Object.values(headers).every((v) => INJECTABLE_HEADER.test(v)) ||
      /[^\x21-\x7e]/.test(wire.target) ||
      bytes.indexOf("\r\n\r\n") > MAX_HEAD_BYTES - 1024;
    return { transport, broken, status: res.statusCode, headers: res.headers, body: res.body };
  }

  async function send(req: FuzzRequest): Promise<Outcome> {
    if (req.advanceMs > 0) {
      h.clock.advance(req.advanceMs);
      // Deadlines passed while the clock moved: let commands time out as the service would.
      if (req.advanceMs >= 1_000) await h.sweep();
    }
    const headers = { ...req.headers };
    const auth = await authorization(req.credential);
    if (auth !== undefined) headers.authorization = auth;
    const target = pathOf(req) + (req.query ? `?${req.query}` : "");
    const wire: WireRequest = { method: req.method, target, headers, body: req.body };
    const sentCorrelationId = headers["x-correlation-id"];
    let exchanged: Omit<Exchange, "method" | "target" | "sentCorrelationId">;
    let violations: Violation[];
    let ex: Exchange;
    // A header value Node would refuse to build, or a target app.inject cannot parse, can only be sent
    // as bytes on a socket.
    const injectable = Object.values(headers).every((v) => INJECTABLE_HEADER.test(v)) && parses(target);
    const transport = req.transport === "inject" && injectable ? "inject" : "socket";
    if (transport === "socket" && port === 0)
      throw new Error("a socket request needs startFuzzTarget({ socketShare > 0 })");
    try {
      exchanged = await exchange(req, wire, transport);
      ex = { method: req.method, target, sentCorrelationId, ...exchanged };
      violations = judge(doc, operations, ex);
    } catch (err) {
      ex = {
        method: req.method,
        target,
        sentCorrelationId,
        transport,
        broken: false,
        status: 0,
        headers: {},
        body: "",
      };
      violations = [{ kind: "no answer", detail: String(err) }];
    }

    stats.sent++;
    stats.byTransport[ex.transport]++;
    stats.statuses.set(ex.status, (stats.statuses.get(ex.status) ?? 0) + 1);
    const dest = destinationOf(operations, req.method, target, ex.transport);
    const label = dest.kind === "operation" ? `${dest.op.method} ${dest.op.path}` : dest.kind;
    const d = stats.byDestination.get(label) ?? { sent: 0, ok: 0 };
    d.sent++;
    if (ex.status >= 200 && ex.status < 300) {
      d.ok++;
      record(ex.body);
    }
    stats.byDestination.set(label, d);
    const cred = req.credential;
    const credLabel = "client" in cred ? `${cred.kind} ${cred.client}` : cred.kind;
    stats.credentials.set(credLabel, (stats.credentials.get(credLabel) ?? 0) + 1);
    for (const v of violations) stats.violations[v.kind]++;

    const report = [
      describeRequest(req),
      `  sent: ${ex.method} ${JSON.stringify(target.slice(0, 300))}${target.length > 300 ? "…" : ""}`,
      `  answered ${ex.status} via ${ex.transport}: ${JSON.stringify(ex.body.slice(0, 400))}`,
      ...violations.map((v) => `  VIOLATION (${v.kind}): ${v.detail}`),
    ].join("\n");
    if (violations.length > 0 && stats.examples.length < MAX_EXAMPLES) stats.examples.push(report);
    return { exchange: ex, violations, report };
  }

  const requests = requestArbitrary({
    doc,
    operations,
    hints,
    clients: clients.map((c) => c.client_id),
    socketShare: opts.socketShare,
  });
  return { doc, operations, requests, stats, send };
}
