import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One webhook request as the receiver saw it. */
export type ReceivedWebhook = {
  path: string;
  headers: IncomingMessage["headers"];
  /** The raw body, as signed. */
  body: string;
  /** What the receiver answered; 0 while it keeps the request hanging. */
  status: number;
  /** The test's clock when it arrived (signatures are checked against it). */
  receivedAt: Date;
};

/**
 * An integrator's webhook endpoint on 127.0.0.1 for the tests: records every request and answers with
 * `answer(request)` (200 by default), so a test can make it fail for a while and then recover, or never
 * answer at all ("hang").
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  answer: (r: Omit<ReceivedWebhook, "status">) => number | "hang" = () => 200;
  private readonly hanging = new Set<ServerResponse>();
  private server: Server | null = null;
  port = 0;

  constructor(private readonly now: () => Date) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** The requests answered 2xx: the deliveries. */
  get delivered(): ReceivedWebhook[] {
    return this.received.filter((r) => r.status >= 200 && r.status < 300);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const seen = {
          path: req.url ?? "",
          headers: req.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          receivedAt: this.now(),
        };
        const answer = this.answer(seen);
        if (answer === "hang") {
          this.received.push({ ...seen, status: 0 });
          this.hanging.add(res);
          return;
        }
        const status = answer;
        this.received.push({ ...seen, status });
        res.writeHead(status, { "content-type": "text/plain" });
        res.end(status < 300 ? "ok" : "receiver says no");
      });
    });
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
}
