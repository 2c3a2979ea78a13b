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
import { idempotencyRepository } from "../../cloud/idempotency/idempotency-repository.ts";
import { IDEMPOTENCY_POLICY } from "../../cloud/idempotency/idempotency-store.ts";
import { AppError } from "../../shared/api/errors.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

/**
 * The Idempotency-Key mechanism on any route that opts in with `config: { idempotent: true }`, on two
 * app instances sharing one store (two replicas), with a handler the test scripts.
 */

const LEASE_MS = IDEMPOTENCY_POLICY.leaseMs;
const TTL_MS = IDEMPOTENCY_POLICY.ttlMs;
/** Small caps, so a test can reach them. */
const POLICY = { ...IDEMPOTENCY_POLICY, maxLiveKeys: { client: 20, user: 3 } };

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
  // Stands in for bearer authentication: "operator/client", or "operator/user/rider" for a rider.
  app.decorateRequest("principal", null);
  app.addHook("onRequest", (request, _reply, done) => {
    const [operatorId = "op-a", id = "client-1", rider] = String(
      request.headers["x-caller"] ?? "op-a/client-1",
    ).split("/");
    request.principal =
      id === "user" && rider
        ? { kind: "user", id: rider, operatorId, permissions: new Set() }
        : { kind: "client", id, operatorId, permissions: new Set() };
    done();
  });
  installIdempotency(app, { db: store.db, clock, policy: POLICY });
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

/** How many keys the default caller (op-a/client-1) holds, on any route. */
const callerKeys = () => idempotencyRepository(store.db).countOf("op-a", "client-1");

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

  it("keeps only 2xx outcomes: after any other answer the key is free and a retry with it runs again", async () => {
    const cases: [number, boolean][] = [
      [200, true],
      [201, true],
      [202, true],
      [400, false],
      [403, false],
      [404, false],
      [422, false],
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
      const row = await idempotencyRepository(store.db).find({
        operatorId: "op-a",
        clientId: "client-1",
        method: "POST",
        route: "/things",
        key,
      });
      const rows = row ? [{ response_status: row.response_status }] : [];
      expect({ status, rows }).toEqual({ status, rows: kept ? [{ response_status: status }] : [] });
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

  it("leaves no key behind a refusal: the same key with a corrected body runs, not 422, and is kept then", async () => {
    behaviour.respond = () => {
      throw new AppError("ERRORS.NOT_FOUND", "no such parent");
    };
    const refused = await send("fix-me", { name: "typo" });
    expect(refused.statusCode).toBe(404);
    expect(refused.json()).toMatchObject({ error_code: "ERRORS.NOT_FOUND", status_code: 404 });
    expect(await callerKeys()).toBe(0);
    // The same refusal again is run again (it changed nothing either time).
    expect(replayed(await send("fix-me", { name: "typo" }))).toBe(false);
    expect(behaviour.runs).toBe(2);

    behaviour.respond = created;
    const fixed = await send("fix-me", { name: "fixed" }, { replica: 1 });
    expect([fixed.statusCode, replayed(fixed)]).toEqual([201, false]);
    const again = await send("fix-me", { name: "fixed" });
    expect([again.statusCode, replayed(again), again.json()]).toEqual([201, true, { id: 3 }]);
    expect((await send("fix-me", { name: "typo" })).statusCode).toBe(422);
    expect(behaviour.runs).toBe(3);
  });

  it("keeps no row for a flood of refused requests with fresh keys", async () => {
    behaviour.respond = (reply) => reply.code(404).send({ status: 404 });
    // In tens at once: a request in progress holds its key, and the test's cap is 20.
    for (let batch = 0; batch < 20; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => send(`flood-${batch}-${i}`, { name: "a" }, { replica: i % 2 })),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(answers.map(() => 404));
    }
    expect(await callerKeys()).toBe(0);
    // Nor do they count against the caller's cap.
    behaviour.respond = created;
    expect((await send("after-flood")).statusCode).toBe(201);
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

  it("caps one caller's live keys: past it a new key is 429 with Retry-After until the oldest expires, not run", async () => {
    const cap = POLICY.maxLiveKeys.client;
    const first = await send("cap-0");
    expect(first.statusCode).toBe(201);
    clock.advance(60_000);
    for (let i = 1; i < cap; i++)
      expect((await send(`cap-${i}`, { name: "a" }, { replica: i % 2 })).statusCode).toBe(201);
    expect(behaviour.runs).toBe(cap);

    const over = await send("cap-over", { name: "a" }, { replica: 1 });
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({
      error_code: "ERRORS.IDEMPOTENCY_KEY_LIMIT_REACHED",
      status_code: 429,
      correlation_id: expect.any(String),
    });
    expect(over.json().error_message).toContain(`${cap} Idempotency-Keys`);
    // The oldest key (cap-0) expires a day after it was made, a minute ago.
    expect(over.headers["retry-after"]).toBe(String((TTL_MS - 60_000) / 1000));
    expect(behaviour.runs).toBe(cap);
    expect(await callerKeys()).toBe(cap);

    // Keys already held still replay; without a key the request is not limited; other callers neither.
    expect(replayed(await send("cap-3"))).toBe(true);
    expect((await send(null)).statusCode).toBe(201);
    expect((await send("cap-over", { name: "a" }, { caller: "op-a/client-2" })).statusCode).toBe(201);
    expect((await send("cap-over", { name: "a" }, { caller: "op-b/client-1" })).statusCode).toBe(201);
    expect(behaviour.runs).toBe(cap + 3);

    // Once the oldest has expired there is room for one more.
    clock.advance(TTL_MS - 60_000);
    const later = await send("cap-over");
    expect([later.statusCode, replayed(later)]).toEqual([201, false]);
    expect((await send("cap-over-2")).statusCode).toBe(429);
  });

  it("caps a rider's live keys lower than an API client's", async () => {
    const rider = "op-a/user/rider-1";
    for (let i = 0; i < POLICY.maxLiveKeys.user; i++)
      expect((await send(`r-${i}`, { name: "a" }, { caller: rider })).statusCode).toBe(201);
    const over = await send("r-over", { name: "a" }, { caller: rider });
    expect(over.statusCode).toBe(429);
    expect(over.json().error_code).toBe("ERRORS.IDEMPOTENCY_KEY_LIMIT_REACHED");
    expect((await send("r-over", { name: "a" }, { caller: "op-a/user/rider-2" })).statusCode).toBe(201);
  });

  it("ignores the header on a route that did not opt in", async () => {
    await send("plain", { name: "a" }, { url: "/plain" });
    const again = await send("plain", { name: "a" }, { url: "/plain" });
    expect(replayed(again)).toBe(false);
    expect(behaviour.runs).toBe(2);
    expect(await callerKeys()).toBe(0);
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
