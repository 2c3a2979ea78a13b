import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { signWebhook } from "./webhook-signature.ts";

const secret = () => `whsec_${randomBytes(32).toString("base64")}`;
const at = new Date("2026-01-15T10:00:00.000Z");
const body = JSON.stringify({ id: "msg_1", type: "alarm", data: { events: [] } });

describe("webhook signatures (S25)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("verify with the standardwebhooks library, and fail with a changed byte or a stale timestamp", () => {
    const current = secret();
    const headers = signWebhook({ id: "msg_1", at, body, secrets: [current] });
    expect(headers["webhook-id"]).toBe("msg_1");
    expect(headers["webhook-timestamp"]).toBe(String(at.getTime() / 1000));
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    vi.setSystemTime(at);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(current).verify(body.replace("alarm", "alarn"), headers)).toThrow();
    vi.setSystemTime(at.getTime() + 6 * 60_000);
    expect(() => new Webhook(current).verify(body, headers)).toThrow(/timestamp/i);
    vi.setSystemTime(at.getTime() - 6 * 60_000);
    expect(() => new Webhook(current).verify(body, headers)).toThrow(/timestamp/i);
  });

  it("carry one signature per secret during a rotation, each verifying on its own", () => {
    const current = secret();
    const previous = secret();
    const headers = signWebhook({ id: "msg_2", at, body, secrets: [current, previous] });
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    vi.setSystemTime(at);
    expect(() => new Webhook(current).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(secret()).verify(body, headers)).toThrow();
  });

  it("are the standardwebhooks library's own signatures, byte for byte, for any body", () => {
    const current = secret();
    const previous = secret();
    for (const text of [body, "", "ümlaut 😀 \u0000 end", JSON.stringify({ n: "x".repeat(10_000) })]) {
      const headers = signWebhook({ id: "msg_3", at, body: text, secrets: [current, previous] });
      const theirs = [current, previous].map((s) => new Webhook(s).sign("msg_3", at, text));
      expect(headers["webhook-signature"]).toBe(theirs.join(" "));
    }
  });
});
