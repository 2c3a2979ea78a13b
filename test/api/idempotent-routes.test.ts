import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type LightMyRequestResponse,
} from "fastify";
import { validatorCompiler } from "fastify-type-provider-zod";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { installErrorHandling } from "../../cloud/http/error-handler.ts";
import { installIdempotency } from "../../cloud/http/idempotency.ts";
import { IDEMPOTENCY_POLICY } from "../../cloud/idempotency/idempotency-store.ts";
import { AppError } from "../../shared/errors.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

/**
 * The Idempotency-Key mechanism on any route that opts in with `config: { idempotent: true }`, on two
 * app instances sharing one store (two replicas), with a handler the test scripts.
 */

const LEASE_MS = IDEMPOTENCY_POLICY.leaseMs;

type Behaviour = { runs: number; respond: (reply: FastifyReply, run: number) => unknown };

let store: TestDb;
let clock: FakeClock;
let behaviour: Behaviour;
let replicas: FastifyInstance[];

const created = (reply: FastifyReply, run: number) =>
  reply.code(201).header("location", `/things/${run}`).send({ id: run });

function buildReplica(): FastifyInstance {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installErrorHandling(app);
  // Stands in for bearer authentication: "operator/client" from a test header.
  app.decorateRequest("principal", null);
  app.addHook("onRequest", (request, _reply, done) => {
    const [operatorId = "op-a", id = "client-1"] = String(
      request.headers["x-caller"] ?? "op-a/client-1",
    ).split("/");
    request.principal = { kind: "client", id, operatorId, permissions: new Set() };
    done();
  });
  installIdempotency(app, { db: store.db, clock });
  const schema = { body: z.object({ name: z.string() }), response: { 201: z.object({ id: z.number() }) } };
  const handler = async (_request: FastifyRequest, reply: FastifyReply) => {
    await behaviour.respond(reply, ++behaviour.runs);
    return reply;
  };
  app.post("/things", { config: { idempotent: true }, schema }, handler);
  app.post("/others", { config: { idempotent: true }, schema }, handler);
  app.post("/plain", { schema }, handler);
  return app;
}

beforeEach(async () => {
  store = await openTestDb();
  clock = new FakeClock();
  behaviour = { runs: 0, respond: created };
  replicas = [buildReplica(), buildReplica()];
  await Promise.all(replicas.map((a) => a.ready()));
});
afterEach(async () => {
  await Promise.all(replicas.map((a) => a.close()));
  await store.drop();
});

function send(
  key: string | null,
  body: Record<string, unknown> = { name: "a" },
  opts: { url?: string; caller?: string; replica?: number } = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { "x-caller": opts.caller ?? "op-a/client-1" };
  if (key !== null) headers["idempotency-key"] = key;
  const app = replicas[opts.replica ?? 0] as FastifyInstance;
  return app.inject({ method: "POST", url: opts.url ?? "/things", payload: body, headers });
}

const replayed = (res: LightMyRequestResponse) => res.headers["idempotent-replayed"] === "true";

/** Makes the next run wait until released; `started` resolves once the handler is running. */
function holdNextRun() {
  const respond = behaviour.respond;
  let onStarted = () => {};
  let release = () => {};
  const started = new Promise<void>((r) => (onStarted = r));
  const released = new Promise<void>((r) => (release = r));
  behaviour.respond = (reply, run) => {
    behaviour.respond = respond;
    onStarted();
    return released.then(() => respond(reply, run));
  };
  return { started, release };
}

describe("a route with config.idempotent", () => {
  it("replays a 201 with its Location header and body, marked as replayed, without running again", async () => {
    const first = await send("k1");
    expect(first.statusCode).toBe(201);
    expect(replayed(first)).toBe(false);
    const again = await send("k1", { name: "a" }, { replica: 1 });
    expect(again.statusCode).toBe(201);
    expect(replayed(again)).toBe(true);
    expect(again.headers.location).toBe("/things/1");
    expect(again.json()).toEqual({ id: 1 });
    expect(behaviour.runs).toBe(1);
  });

  it("keeps 4xx outcomes but releases 409, 429 and 5xx ones, so a retry with the key runs again", async () => {
    const cases: [number, boolean][] = [
      [400, true],
      [403, true],
      [404, true],
      [422, true],
      [409, false],
      [429, false],
      [500, false],
      [503, false],
    ];
    for (const [status, kept] of cases) {
      const key = `status-${status}`;
      behaviour.respond = (reply) => reply.code(status).send({ status });
      const runs = behaviour.runs;
      expect((await send(key)).statusCode).toBe(status);
      behaviour.respond = created;
      const retry = await send(key);
      expect({ status, replayed: replayed(retry), ran: behaviour.runs - runs }).toEqual(
        kept ? { status, replayed: true, ran: 1 } : { status, replayed: false, ran: 2 },
      );
      expect(retry.statusCode).toBe(kept ? status : 201);
    }
  });

  it("releases the key when the handler throws (500 in the error body), and the retry then succeeds", async () => {
    behaviour.respond = () => {
      throw new Error("the store went away");
    };
    const failed = await send("boom");
    expect(failed.statusCode).toBe(500);
    expect(failed.json()).toMatchObject({ error_code: "ERRORS.INTERNAL" });
    behaviour.respond = created;
    const retry = await send("boom");
    expect(retry.statusCode).toBe(201);
    expect(replayed(retry)).toBe(false);
    expect(replayed(await send("boom"))).toBe(true);
  });

  it("keeps an AppError answer in the spec's error body and replays it", async () => {
    behaviour.respond = () => {
      throw new AppError("ERRORS.NOT_FOUND", "no such parent");
    };
    const first = await send("missing");
    expect(first.statusCode).toBe(404);
    const again = await send("missing");
    expect(replayed(again)).toBe(true);
    // The kept body, under the retry's own correlation id (its request id).
    expect(again.json()).toEqual({ ...first.json(), correlation_id: expect.any(String) });
    expect(again.json().correlation_id).not.toBe(first.json().correlation_id);
    expect(behaviour.runs).toBe(1);
  });

  it("answers 409 with Retry-After on another replica while the first request runs, then replays its result", async () => {
    const hold = holdNextRun();
    const firstPending = send("race");
    await hold.started;

    const second = await send("race", { name: "a" }, { replica: 1 });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({ error_code: "ERRORS.IDEMPOTENCY_KEY_IN_USE", status_code: 409 });
    expect(second.headers["retry-after"]).toBe("1");
    // A different request with the key is refused outright, running or not.
    const other = await send("race", { name: "b" }, { replica: 1 });
    expect(other.statusCode).toBe(422);

    hold.release();
    expect((await firstPending).statusCode).toBe(201);
    const retry = await send("race", { name: "a" }, { replica: 1 });
    expect(replayed(retry)).toBe(true);
    expect(retry.json()).toEqual({ id: 1 });
    expect(behaviour.runs).toBe(1);
  });

  it("runs the handler once for a burst of requests with one key across replicas", async () => {
    const burst = await Promise.all(
      Array.from({ length: 8 }, (_, i) => send("burst", { name: "a" }, { replica: i % 2 })),
    );
    expect(behaviour.runs).toBe(1);
    for (const res of burst) {
      if (res.statusCode === 409) continue;
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({ id: 1 });
    }
    expect(burst.filter((r) => r.statusCode === 201 && !replayed(r))).toHaveLength(1);
  });

  it("treats a reservation older than its 30 s lease as abandoned; the late first answer is not kept", async () => {
    const stuck = holdNextRun();
    const stuckPending = send("lease");
    await stuck.started;

    clock.advance(LEASE_MS - 1);
    expect((await send("lease", { name: "a" }, { replica: 1 })).statusCode).toBe(409);
    clock.advance(1);
    const takeover = holdNextRun();
    const takeoverPending = send("lease", { name: "a" }, { replica: 1 });
    await takeover.started;

    // The abandoned request answers late; the key stays with the request that took it over.
    stuck.release();
    expect((await stuckPending).json()).toEqual({ id: 1 });
    expect((await send("lease")).statusCode).toBe(409);

    takeover.release();
    expect((await takeoverPending).json()).toEqual({ id: 2 });
    const retry = await send("lease");
    expect(replayed(retry)).toBe(true);
    expect(retry.json()).toEqual({ id: 2 });
  });

  it("scopes keys to the operator, the client and the route", async () => {
    await send("same", { name: "a" });
    const otherClient = await send("same", { name: "b" }, { caller: "op-a/client-2" });
    const otherOperator = await send("same", { name: "b" }, { caller: "op-b/client-1" });
    const otherRoute = await send("same", { name: "b" }, { url: "/others" });
    expect([otherClient, otherOperator, otherRoute].map((r) => [r.statusCode, replayed(r)])).toEqual([
      [201, false],
      [201, false],
      [201, false],
    ]);
    expect(behaviour.runs).toBe(4);
  });

  it("ignores the header on a route that did not opt in", async () => {
    await send("plain", { name: "a" }, { url: "/plain" });
    const again = await send("plain", { name: "a" }, { url: "/plain" });
    expect(replayed(again)).toBe(false);
    expect(behaviour.runs).toBe(2);
    expect(await store.db.selectFrom("idempotency_keys").selectAll().execute()).toEqual([]);
  });

  it("refuses to register an idempotent route open to anonymous callers (its keys need a caller)", async () => {
    const app = Fastify();
    app.setValidatorCompiler(validatorCompiler);
    installIdempotency(app, { db: store.db, clock });
    await expect(async () => {
      app.post("/open", { config: { idempotent: true, public: true } }, () => ({}));
      await app.ready();
    }).rejects.toThrow(/needs a caller/);
    await app.close();
  });
});
