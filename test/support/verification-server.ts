import { timingSafeEqual } from "node:crypto";
import { EventEmitter, once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** What the server made of a callback's Standard Webhooks signature. */
export type SignatureCheck = "valid" | "missing" | "invalid" | "stale" | "replayed" | "unchecked";

/** One callback the server received. */
export type Received = {
  path: string;
  body: Record<string, unknown>;
  /** The body's exact bytes, as signed. */
  raw: string;
  headers: IncomingMessage["headers"];
  signature: SignatureCheck;
};

/** Standard Webhooks' tolerance for a timestamp, either way. */
const TOLERANCE_S = 5 * 60;

/**
 * Checks a callback as an integrator would (docs/verification-callbacks.md): a `v1` signature of
 * `id.timestamp.body` under one of the secrets (computed by the standardwebhooks library's own signer),
 * a timestamp within 5 minutes of `now` (the test's clock, which the library's verify cannot take), and
 * an id not seen before.
 */
function checkSignature(
  headers: IncomingMessage["headers"],
  raw: string,
  o: { secrets: readonly string[]; now: Date; seen: Set<string> },
): SignatureCheck {
  const id = headers["webhook-id"];
  const ts = headers["webhook-timestamp"];
  const sig = headers["webhook-signature"];
  if (typeof id !== "string" || typeof ts !== "string" || typeof sig !== "string") return "missing";
  const seconds = Number(ts);
  if (!/^\d+$/.test(ts) || Math.abs(o.now.getTime() / 1000 - seconds) > TOLERANCE_S) return "stale";
  const passed = sig.split(" ").map((s) => Buffer.from(s));
  const matches = o.secrets.some((secret) => {
    const expected = Buffer.from(new Webhook(secret).sign(id, new Date(seconds * 1000), raw));
    return passed.some((p) => p.length === expected.length && timingSafeEqual(p, expected));
  });
  if (!matches) return "invalid";
  if (o.seen.has(id)) return "replayed";
  o.seen.add(id);
  return "valid";
}

/** What the server does with a callback: answer, or keep the connection open without a word. */
export type Behaviour = { status: number; body?: unknown; headers?: Record<string, string> } | "hang";

/**
 * Plays an operator's verification endpoints (`/sign-up`, `/sign-in`) on 127.0.0.1 for the tests. By
 * default it behaves like a good integrator: sign-up answers 204 and remembers the user's
 * service_user_id; sign-in answers 200 with that id when the challenge token is one it was told about
 * (`accept`). `behave` overrides the answer per path; every callback is recorded and announced.
 * Given the operator's signing secrets (and the test's clock), it checks each callback's signature and
 * answers 401 to one without a valid, fresh, first-seen one, as an integrator must.
 */
export class VerificationServer extends EventEmitter {
  readonly received: Received[] = [];
  private readonly ids = new Map<string, string>();
  private readonly challenges = new Map<string, string>();
  private readonly overrides = new Map<string, (r: Received) => Behaviour | Promise<Behaviour>>();
  private readonly hanging = new Set<ServerResponse>();
  private readonly seenIds = new Set<string>();
  private server: Server | null = null;
  port = 0;

  constructor(private readonly verify?: { secrets: readonly string[]; now: () => Date }) {
    super();
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /** The service_user_id the server gives back for a user at sign-in (learnt from sign-up otherwise). */
  know(userId: string, serviceUserId: string): void {
    this.ids.set(userId, serviceUserId);
  }

  /** A challenge token the rider's app registered: sign-in accepts it once, for this user. */
  accept(userId: string, challengeToken: string): void {
    this.challenges.set(challengeToken, userId);
  }

  /** Answers every callback to `path` this way (when the promise settles, if one) until `reset`. */
  behave(
    path: "/sign-up" | "/sign-in",
    fn: Behaviour | ((r: Received) => Behaviour | Promise<Behaviour>),
  ): void {
    this.overrides.set(path, typeof fn === "function" ? fn : () => fn);
  }

  reset(): void {
    this.overrides.clear();
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
  }

  /** Resolves with the next callback to `path` as soon as it arrives. */
  next(path: string): Promise<Received> {
    return new Promise((resolve) => {
      const on = (r: Received) => {
        if (r.path !== path) return;
        this.off("callback", on);
        resolve(r);
      };
      this.on("callback", on);
    });
  }

  count(path: string): number {
    return this.received.filter((r) => r.path === path).length;
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {}
    const signature = this.verify
      ? checkSignature(req.headers, raw, { ...this.verify, now: this.verify.now(), seen: this.seenIds })
      : "unchecked";
    const r: Received = { path: req.url ?? "", body, raw, headers: req.headers, signature };
    this.received.push(r);
    const decided =
      signature === "valid" || signature === "unchecked"
        ? (this.overrides.get(r.path)?.(r) ?? this.standard(r))
        : { status: 401, body: { error: `signature ${signature}` } };
    this.emit("callback", r);
    const behaviour = await decided;
    if (behaviour === "hang") {
      this.hanging.add(res);
      return;
    }
    const payload =
      behaviour.body === undefined
        ? ""
        : typeof behaviour.body === "string"
          ? behaviour.body
          : JSON.stringify(behaviour.body);
    res.writeHead(behaviour.status, {
      ...(payload ? { "content-type": "application/json" } : {}),
      ...behaviour.headers,
    });
    res.end(payload);
  }

  private standard(r: Received): Behaviour {
    const userId = String(r.body.user_id ?? "");
    if (r.path === "/sign-up") {
      this.ids.set(userId, String(r.body.service_user_id));
      return { status: 204 };
    }
    if (r.path === "/sign-in") {
      const token = String(r.body.challenge_token ?? "");
      const id = this.ids.get(userId);
      if (this.challenges.get(token) !== userId || !id) return { status: 401, body: { error: "bad nonce" } };
      this.challenges.delete(token);
      return { status: 200, body: { service_user_id: id } };
    }
    return { status: 404 };
  }
}
