import { randomUUID } from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import { createTokenIssuer } from "../../cloud/auth/tokens.ts";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { closeSession } from "../../cloud/sessions/close-session.ts";
import { sessionRepository } from "../../cloud/sessions/session-repository.ts";
import type { Db } from "../../cloud/store/db.ts";
import { Command } from "../../shared/api/command.ts";
import { PERMISSIONS, type Permission } from "../../shared/api/permissions.ts";
import { type CloudHarness, ISSUER, TOKEN_SECRET } from "./cloud-harness.ts";
import { gatewayReports } from "./gateway-reports.ts";
import { riderToken } from "./riders.ts";

/** Whoever calls: a fresh access token at the fake clock's now each time (tokens last an hour). */
export type Caller = { id: string; token(): Promise<string> };

const issuer = (h: CloudHarness) =>
  createTokenIssuer({ secret: TOKEN_SECRET, issuer: ISSUER, clock: h.clock });

/** A rider of a fixture operator (declared through the manifest), with tokens minted as sign-in mints them. */
export async function rider(h: CloudHarness, operatorId: string, userId: string): Promise<Caller> {
  const { serviceUserId } = await riderToken(h, operatorId, userId);
  return { id: serviceUserId, token: () => issuer(h).issueUser({ id: serviceUserId, operatorId }) };
}

/** An S2S client of a fixture operator, with tokens minted as POST /oauth2/token mints them. */
export function client(
  h: CloudHarness,
  clientId: string,
  operatorId: string,
  permissions: readonly Permission[] = PERMISSIONS,
): Caller {
  return { id: clientId, token: () => issuer(h).issue({ id: clientId, operatorId, permissions }) };
}

/** Long enough for the per-device lock/unlock throttle (3 s) to pass. */
export const THROTTLE_MS = 3_000;

/**
 * Drives riders' commands through the real command path and plays the devices' gateways, for suites about
 * sessions: POST the command with a token, then report its progress as the gateway would.
 */
export function riderFlow(h: CloudHarness) {
  // Outbox sequence numbers of this harness's gateway reports (far from other helpers' numbers).
  const gateway = gatewayReports(() => h, 100_000);

  async function gatewayOf(deviceId: string): Promise<string> {
    const device = await deviceRepository(h.db).find(deviceId);
    if (!device) throw new Error(`device ${deviceId} not found`);
    if (!device.gateway_id) throw new Error(`device ${deviceId} has no gateway`);
    return device.gateway_id;
  }

  const flow = {
    /** GET (or any method) with a bearer token. */
    async request(who: Caller | null, url: string, method: "GET" | "POST" = "GET", payload?: unknown) {
      return h.app.inject({
        method,
        url,
        headers: who ? { authorization: `Bearer ${await who.token()}` } : {},
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      });
    },

    postCommand(
      who: Caller,
      deviceId: string,
      body: Record<string, unknown>,
    ): Promise<LightMyRequestResponse> {
      return flow.request(who, `/device/v1/devices/${deviceId}/commands`, "POST", body);
    },

    /** A command that must be accepted. */
    async command(who: Caller, deviceId: string, body: Record<string, unknown>): Promise<Command> {
      const res = await flow.postCommand(who, deviceId, body);
      expect(res.statusCode, res.body).toBe(200);
      return Command.parse(res.json());
    },

    /** Takes the next outbox sequence number, for a report sent later in its place (out of order). */
    nextSeq: () => gateway.nextSeq(),

    /** The gateway reports the command's outcome. */
    async report(
      cmd: Pick<Command, "id" | "device">,
      state: "RECEIVED" | "SUCCESS" | "ERROR",
      opts: {
        lock_state?: "LOCKED" | "UNLOCKED";
        reason?: string;
        observedAt?: string;
        seq?: number;
        held_by_another?: boolean;
      } = {},
    ): Promise<void> {
      expect(await gateway.progress(await gatewayOf(cmd.device.id), cmd, state, opts)).toBe("applied");
    },

    /** The gateway reports a lock reading no command caused (someone at the device, a technician). */
    async sensed(
      deviceId: string,
      lock_state: "LOCKED" | "UNLOCKED",
      observedAt?: string,
      seq?: number,
    ): Promise<void> {
      const reading = { lock_state, cause: "hardware_event" } as const;
      await gateway.deviceState(await gatewayOf(deviceId), deviceId, reading, { observedAt, seq });
    },

    /** lock → SUCCESS (LOCKED), then the throttle window passes. */
    async lock(who: Caller, deviceId: string): Promise<Command> {
      const cmd = await flow.command(who, deviceId, { command: "lock" });
      await flow.report(cmd, "SUCCESS", { lock_state: "LOCKED" });
      h.clock.advance(THROTTLE_MS);
      return cmd;
    },

    /** unlock → SUCCESS (UNLOCKED), then the throttle window passes. */
    async unlock(who: Caller, deviceId: string): Promise<Command> {
      const cmd = await flow.command(who, deviceId, { command: "unlock" });
      await flow.report(cmd, "SUCCESS", { lock_state: "UNLOCKED" });
      h.clock.advance(THROTTLE_MS);
      return cmd;
    },

    /** take-photo on a camera GUARD, then its photo in one part and the SUCCESS, as its gateway sends them. */
    async photo(who: Caller, guardId: string, jpeg: Buffer): Promise<Command> {
      const cmd = await flow.command(who, guardId, { command: "take-photo" });
      const gatewayId = await gatewayOf(guardId);
      const kept = await h.report(gatewayId, {
        type: "photo",
        gateway_id: gatewayId,
        seq: gateway.nextSeq(),
        observed_at: h.clock.now().toISOString(),
        command_id: cmd.id,
        device_id: guardId,
        part: 1,
        parts: 1,
        mime: "image/jpeg",
        data: jpeg.toString("base64"),
      });
      expect(kept).toBe("applied");
      await flow.report(cmd, "SUCCESS");
      return cmd;
    },

    /** book → SUCCESS. */
    async book(who: Caller, deviceId: string, body: Record<string, unknown> = {}): Promise<Command> {
      const cmd = await flow.command(who, deviceId, { command: "book", ...body });
      await flow.report(cmd, "SUCCESS");
      return cmd;
    },
  };
  return flow;
}

export type RiderFlow = ReturnType<typeof riderFlow>;

/** A session written straight through the session store, with its events at chosen times (for lists). */
export async function seedSession(
  db: Db,
  s: {
    operatorId: string;
    userId: string;
    deviceId: string;
    locationId: string;
    createdAt: string;
    book?: string;
    start?: string;
    end?: string;
    id?: string;
  },
): Promise<string> {
  const id = s.id ?? randomUUID();
  await db.transaction().execute(async (trx) => {
    const sessions = sessionRepository(trx);
    await sessions.insert({
      id,
      operator_id: s.operatorId,
      user_id: s.userId,
      access_key_id: null,
      location_id: s.locationId,
      device_id: s.deviceId,
      price_list_id: null,
      status: "pending",
      status_at: s.createdAt,
      booked_time: null,
      booked_until_time: null,
      start_time: null,
      end_time: null,
      command_id: null,
      ended_by: null,
      fee_currency: null,
      fee_value: null,
      created_at: s.createdAt,
      updated_at: s.createdAt,
    });
    if (s.book) {
      const until = new Date(Date.parse(s.book) + 3_600_000).toISOString();
      await sessions.record(id, { name: "book", timestamp: s.book, booked_until: until }, new Date(s.book));
    }
    if (s.start) await sessions.record(id, { name: "start", timestamp: s.start }, new Date(s.start));
    if (s.end) await closeSession(trx, { id }, new Date(s.end), "unlock");
  });
  return id;
}
