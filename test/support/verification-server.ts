import { EventEmitter, once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One callback the server received. */
export type Received = { path: string; body: Record<string, unknown>; headers: IncomingMessage["headers"] };

/** What the server does with a callback: answer, or keep the connection open without a word. */
export type Behaviour = { status: number; body?: unknown; headers?: Record<string, string> } | "hang";

/**
 * Plays an operator's verification endpoints (`/sign-up`, `/sign-in`) on 127.0.0.1 for the tests. By
 * default it behaves like a good integrator: sign-up answers 204 and remembers the user's
 * service_user_id; sign-in answers 200 with that id when the challenge token is one it was told about
 * (`accept`). `behave` overrides the answer per path; every callback is recorded and announced.
 */
export class VerificationServer extends EventEmitter {
  readonly received: Received[] = [];
  private readonly ids = new Map<string, string>();
  private readonly challenges = new Map<string, string>();
  private readonly overrides = new Map<string, (r: Received) => Behaviour>();
  private readonly hanging = new Set<ServerResponse>();
  private server: Server | null = null;
  port = 0;

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

  /** Answers every callback to `path` this way until `reset`. */
  behave(path: "/sign-up" | "/sign-in", fn: Behaviour | ((r: Received) => Behaviour)): void {
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
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    } catch {}
    const r: Received = { path: req.url ?? "", body, headers: req.headers };
    this.received.push(r);
    const behaviour = this.overrides.get(r.path)?.(r) ?? this.standard(r);
    this.emit("callback", r);
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
