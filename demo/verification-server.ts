import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { systemClock } from "../shared/node/system-clock.ts";
import type { Clock } from "../shared/time/clock.ts";

/** Spec (Limits): the suggested lifetime of a sign-in challenge nonce. */
export const CHALLENGE_LIFETIME_MS = 60_000;
const BODY_LIMIT = 16 * 1024;
/** A callback id is remembered this long: past Standard Webhooks' ±5 minutes its timestamp fails anyway. */
const SEEN_ID_MS = 10 * 60_000;

export type DemoRider = { userId: string; serviceUserId: string; phoneNumber?: string };

/**
 * The demo operator's own server, playing the integrator's side of external-user authentication
 * (spec: External users) on 127.0.0.1:
 *
 * - `POST /users {user_id}` — the integrator's own sign-up of a person in its app: from then on the
 *   service may sign that user up.
 * - `POST /challenges {user_id, challenge_token?}` — what the rider's app does before signing in: it
 *   registers a nonce of its own (or gets one minted) with its operator's server; valid 60 s, once.
 * - `POST /sign-up {user_id, service_user_id}` — the sign-up verification callback: remembers the id, 204,
 *   for a user of the app; 404 for anyone else, so an invented user_id becomes nobody's.
 * - `POST /sign-in {user_id, challenge_token}` — the sign-in verification callback: 200
 *   `{service_user_id, phone_number?}` for a live nonce registered for that user, 401 otherwise.
 *
 * Both callbacks must carry the service's Standard Webhooks signature under the operator's secret, fresh
 * and not seen before (docs/verification-callbacks.md); anything else answers 401 before it is read.
 * Riders of the site manifest are known from the start.
 */
export class DemoVerificationServer {
  private server: Server | null = null;
  /** The app's users; the service_user_id once the service has told it. */
  private readonly riders = new Map<string, { serviceUserId?: string; phoneNumber?: string }>();
  private readonly challenges = new Map<string, { userId: string; until: number }>();
  /** Callback ids seen, and until when they are remembered. */
  private readonly seen = new Map<string, number>();
  private readonly webhook: Webhook;
  private readonly clock: Clock;
  url = "";

  constructor(riders: DemoRider[], o: { secret: string; clock?: Clock }) {
    for (const r of riders)
      this.riders.set(r.userId, { serviceUserId: r.serviceUserId, phoneNumber: r.phoneNumber });
    this.webhook = new Webhook(o.secret);
    this.clock = o.clock ?? systemClock;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch(() => send(res, 500, { error: "internal error" }));
    });
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Whether a callback is the service's own: the signature under the secret, the timestamp within 5
   * minutes (both by the standardwebhooks library), and an id not seen before (a replay).
   */
  private isSigned(req: IncomingMessage, raw: string, now: number): boolean {
    const header = (name: string) => {
      const v = req.headers[name];
      return typeof v === "string" ? v : "";
    };
    const headers = {
      "webhook-id": header("webhook-id"),
      "webhook-timestamp": header("webhook-timestamp"),
      "webhook-signature": header("webhook-signature"),
    };
    try {
      this.webhook.verify(raw, headers);
    } catch (err) {
      if (err instanceof WebhookVerificationError) return false;
      throw err;
    }
    if (this.seen.has(headers["webhook-id"])) return false;
    this.seen.set(headers["webhook-id"], now + SEEN_ID_MS);
    return true;
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== "POST") return send(res, 405, { error: "POST only" });
    const raw = await readBody(req);
    const now = this.clock.now().getTime();
    for (const [id, until] of this.seen) if (until <= now) this.seen.delete(id);
    const isCallback = req.url === "/sign-up" || req.url === "/sign-in";
    if (isCallback && (raw === null || !this.isSigned(req, raw, now)))
      return send(res, 401, { error: "not signed by the service (Standard Webhooks), stale, or replayed" });
    const body = raw === null ? null : parseObject(raw);
    if (!body) return send(res, 400, { error: "send a JSON object" });
    const userId = typeof body.user_id === "string" ? body.user_id : "";
    if (!userId) return send(res, 400, { error: "user_id is required" });
    for (const [token, c] of this.challenges) if (c.until <= now) this.challenges.delete(token);

    switch (req.url) {
      case "/users": {
        if (!this.riders.has(userId)) this.riders.set(userId, {});
        return send(res, 201, { user_id: userId });
      }
      case "/challenges": {
        const given = typeof body.challenge_token === "string" ? body.challenge_token : "";
        const token = given || randomBytes(16).toString("base64url");
        this.challenges.set(token, { userId, until: now + CHALLENGE_LIFETIME_MS });
        return send(res, 201, { challenge_token: token, expires_in: CHALLENGE_LIFETIME_MS / 1000 });
      }
      case "/sign-up": {
        if (typeof body.service_user_id !== "string") return send(res, 400, { error: "no service_user_id" });
        const known = this.riders.get(userId);
        if (!known) return send(res, 404, { error: "no such user in this app" });
        this.riders.set(userId, { ...known, serviceUserId: body.service_user_id });
        return send(res, 204);
      }
      case "/sign-in": {
        const token = typeof body.challenge_token === "string" ? body.challenge_token : "";
        const challenge = this.challenges.get(token);
        const rider = this.riders.get(userId);
        if (!challenge || challenge.userId !== userId || !rider?.serviceUserId)
          return send(res, 401, { error: "unknown or expired challenge token for this user" });
        this.challenges.delete(token);
        return send(res, 200, {
          service_user_id: rider.serviceUserId,
          ...(rider.phoneNumber ? { phone_number: rider.phoneNumber } : {}),
        });
      }
      default:
        return send(res, 404, { error: "POST /users, /challenges, /sign-up or /sign-in" });
    }
  }
}

function send(res: ServerResponse, status: number, body?: unknown) {
  const payload = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, payload ? { "content-type": "application/json" } : {}).end(payload);
}

/** The body as sent (a signature covers its exact bytes), or null past the limit. */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseObject(raw: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
