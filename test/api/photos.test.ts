import { randomBytes, randomUUID } from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyPhotoPart } from "../../cloud/photos/apply-photo-part.ts";
import { photoRepository } from "../../cloud/photos/photo-repository.ts";
import { photoParts } from "../../gateway/features/photo-upload.ts";
import { Command } from "../../shared/api/command.ts";
import { PHOTO_PART_BYTES, PhotoPart, UpMessage } from "../../shared/wire/messages.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { CLIENTS, fx, OP_A, OP_B } from "../support/fixture-site.ts";
import { gatewayReports } from "../support/gateway-reports.ts";
import { type Caller, client, rider, riderFlow } from "../support/rider-sessions.ts";

/**
 * GET /device/v1/commands/{command_id}/photo (docs/decisions/photos.md): the cloud assembles the parts the
 * gateway's outbox sends with a take-photo's SUCCESS, and serves the photo to the device's operator.
 */

const GUARD = fx.guard("gw-a1");
const LOCKER = fx.device("L1", "1");
const LOCKER_2 = fx.device("L1", "2");
const log = pino({ level: "silent" });
const photoUrl = (id: string) => `/device/v1/commands/${id}/photo`;

let h: CloudHarness;
const gateway = gatewayReports(() => h);

beforeAll(async () => {
  h = await startCloudHarness();
});
afterAll(() => h.close());

/** A JPEG-looking image of `size` bytes (SOI … EOI), different each time. */
function aJpeg(size: number): Buffer {
  const b = randomBytes(size);
  b.set([0xff, 0xd8], 0);
  b.set([0xff, 0xd9], size - 2);
  return b;
}

/** take-photo on the camera GUARD, or a lock on a locker (a command that takes no photo). */
async function takePhoto(deviceId = GUARD): Promise<Command> {
  const res = await h.call(CLIENTS.admin, {
    method: "POST",
    url: `/device/v1/devices/${deviceId}/commands`,
    payload: { command: deviceId === GUARD ? "take-photo" : "lock" },
  });
  expect(res.statusCode, res.body).toBe(200);
  return Command.parse(res.json());
}

type Part = Omit<PhotoPart, "gateway_id" | "seq" | "observed_at">;

/** The outbox messages the gateway writes for this photo (its own splitting). */
function partsOf(cmd: Pick<Command, "id">, bytes: Buffer, mime = "image/jpeg"): Part[] {
  const parts = photoParts({ command_id: cmd.id, device_id: GUARD }, { bytes, mime });
  if ("refused" in parts) throw new Error(parts.refused);
  return parts;
}

/** Plays the gateway sending one photo part under a sequence number of its own (or the one given). */
function send(part: Part, opts: { gatewayId?: string; seq?: number } = {}) {
  const gatewayId = opts.gatewayId ?? "gw-a1";
  return h.report(gatewayId, {
    ...part,
    gateway_id: gatewayId,
    seq: opts.seq ?? gateway.nextSeq(),
    observed_at: h.clock.now().toISOString(),
  });
}

const getPhoto = (id: string, as: string | null = CLIENTS.admin) =>
  h.call(as, { method: "GET", url: photoUrl(id) });

const keptParts = async (id: string) =>
  (await photoRepository(h.db).partsOf(id)).map((r) => r.part).sort((a, b) => a - b);

/** Sessions of this database waiting for a lock to hold a command's row (applyPhotoPart). */
async function waitingOnTheCommand(): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock'
      and query like 'update "commands" set "updated_at" = "updated_at"%'`.execute(h.db);
  return rows[0]?.n ?? 0;
}

function expectError(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  expect(res.json()).toEqual({
    status_code: status,
    error_code: code,
    error_message: expect.any(String),
    correlation_id: res.headers["x-correlation-id"],
  });
}

describe("a take-photo's photo", () => {
  it("is served at the URL of the RESPONSE_PHOTO_TAKEN event, with its content type, once its parts arrived out of order", async () => {
    const cmd = await takePhoto();
    const bytes = aJpeg(2 * PHOTO_PART_BYTES + 1234);
    const [p1, p2, p3] = partsOf(cmd, bytes) as [Part, Part, Part];
    expect(await gateway.progress("gw-a1", cmd, "RECEIVED")).toBe("applied");
    for (const p of [p3, p1]) expect(await send(p)).toBe("applied");
    expect(
      await gateway.progress("gw-a1", cmd, "SUCCESS", { reason: `photo taken (${bytes.length} bytes)` }),
    ).toBe("applied");
    expect(await send(p2)).toBe("applied");

    const done = Command.parse(
      (await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/commands/${cmd.id}` })).json(),
    );
    expect(done.state.value).toBe("SUCCESS");
    const taken = done.events.find((e) => e.name === "RESPONSE_PHOTO_TAKEN");
    expect(taken?.value).toBe(photoUrl(cmd.id));

    const res = await getPhoto(cmd.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers["content-type"]).toBe("image/jpeg");
    expect(res.headers["content-length"]).toBe(String(bytes.length));
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["cache-control"]).toMatch(/^private/);
    expect(res.rawPayload.equals(bytes)).toBe(true);
    // Assembled: the parts are gone.
    expect(await keptParts(cmd.id)).toEqual([]);
    // Any client of the operator reads it, with or without extra permissions.
    expect((await getPhoto(cmd.id, CLIENTS.basic)).rawPayload.equals(bytes)).toBe(true);
  });

  it("answers 404 with Retry-After and a clear message until the last part is there, whether the SUCCESS came first or not", async () => {
    const cmd = await takePhoto();
    const bytes = aJpeg(PHOTO_PART_BYTES + 10);
    const [p1, p2] = partsOf(cmd, bytes) as [Part, Part];

    const sent = await getPhoto(cmd.id);
    expectError(sent, 404, "ERRORS.NOT_FOUND");
    expect(sent.json().error_message).toMatch(/has not arrived yet \(the command is SENT\)/);
    expect(sent.headers["retry-after"]).toBe("2");

    expect(await gateway.progress("gw-a1", cmd, "SUCCESS")).toBe("applied");
    const succeeded = await getPhoto(cmd.id);
    expectError(succeeded, 404, "ERRORS.NOT_FOUND");
    expect(succeeded.json().error_message).toMatch(/has not arrived yet \(the command is SUCCESS\)/);

    expect(await send(p2)).toBe("applied");
    expectError(await getPhoto(cmd.id), 404, "ERRORS.NOT_FOUND");
    expect(await keptParts(cmd.id)).toEqual([2]);

    expect(await send(p1)).toBe("applied");
    const res = await getPhoto(cmd.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.rawPayload.equals(bytes)).toBe(true);
  });

  it("takes every part once: a repeated sequence number, and a part sent again under a new one, before and after assembly", async () => {
    const cmd = await takePhoto();
    const bytes = aJpeg(PHOTO_PART_BYTES + 99);
    const [p1, p2] = partsOf(cmd, bytes) as [Part, Part];
    const seq = gateway.nextSeq();
    expect(await send(p1, { seq })).toBe("applied");
    expect(await send(p1, { seq })).toBe("duplicate");
    // The same part with other bytes under a new number (a resend after the gateway lost its ack): the first wins.
    expect(await send({ ...p1, data: aJpeg(10).toString("base64") })).toBe("applied");
    expect(await keptParts(cmd.id)).toEqual([1]);
    expect(await send(p2)).toBe("applied");
    expect(await send(p2)).toBe("applied");
    expect(await send(p1)).toBe("applied");
    expect(await keptParts(cmd.id)).toEqual([]);
    expect((await getPhoto(cmd.id)).rawPayload.equals(bytes)).toBe(true);
    expect(await photoRepository(h.db).find(cmd.id)).toMatchObject({
      size: bytes.length,
      mime: "image/jpeg",
    });
  });

  // Row locks only exist on PostgreSQL (SQLite has one writer): the case is defined for that store alone.
  if (process.env.TEST_DB === "postgres")
    it("is assembled when a replica applies the last part while another still holds the one before (PostgreSQL)", async () => {
      const cmd = await takePhoto();
      const bytes = aJpeg(3 * PHOTO_PART_BYTES);
      const [p1, p2, p3] = partsOf(cmd, bytes) as [Part, Part, Part];
      expect(await send(p1)).toBe("applied");
      let second: Promise<unknown> | undefined;
      await h.db.transaction().execute(async (trx) => {
        const msg = PhotoPart.parse({
          ...p2,
          gateway_id: "gw-a1",
          seq: gateway.nextSeq(),
          observed_at: h.clock.now().toISOString(),
        });
        expect(await applyPhotoPart(trx, { gatewayId: "gw-a1", msg, now: h.clock.now(), log })).toBe(true);
        // The other replica, on a connection of its own, reaches the command's row and waits for this commit.
        second = send(p3);
        await eventually(async () => expect(await waitingOnTheCommand()).toBeGreaterThan(0));
      });
      expect(await second).toBe("applied");
      expect(await keptParts(cmd.id)).toEqual([]);
      expect((await getPhoto(cmd.id)).rawPayload.equals(bytes)).toBe(true);
    });

  it("is assembled when its last two parts are applied at once, as by two cloud replicas", async () => {
    const cmd = await takePhoto();
    const bytes = aJpeg(3 * PHOTO_PART_BYTES);
    const [p1, p2, p3] = partsOf(cmd, bytes) as [Part, Part, Part];
    expect(await send(p1)).toBe("applied");
    expect(await Promise.all([send(p3), send(p2)])).toEqual(["applied", "applied"]);
    expect(await keptParts(cmd.id)).toEqual([]);
    expect((await getPhoto(cmd.id)).rawPayload.equals(bytes)).toBe(true);
  });

  it("serves a PNG as image/png", async () => {
    const cmd = await takePhoto();
    const bytes = randomBytes(300);
    for (const p of partsOf(cmd, bytes, "image/png")) expect(await send(p)).toBe("applied");
    const res = await getPhoto(cmd.id);
    expect(res.headers["content-type"]).toBe("image/png");
    expect(res.rawPayload.equals(bytes)).toBe(true);
  });

  it("drops parts about a command the gateway does not drive, that took no photo, or that disagree with the parts kept", async () => {
    const cmd = await takePhoto();
    const [p1, p2] = partsOf(cmd, aJpeg(PHOTO_PART_BYTES + 1)) as [Part, Part];
    // Another gateway of the same operator, and another operator's gateway: applied (their seq is used) but kept nowhere.
    expect(await send(p1, { gatewayId: "gw-a2" })).toBe("applied");
    expect(await send(p1, { gatewayId: "gw-b1" })).toBe("applied");
    // The right gateway, but another device, or a number past the count.
    expect(await send({ ...p1, device_id: LOCKER })).toBe("applied");
    expect(await send({ ...p2, part: 3 })).toBe("applied");
    expect(await keptParts(cmd.id)).toEqual([]);
    // A lock is no photo.
    const lock = await takePhoto(LOCKER);
    expect(await send({ ...p1, command_id: lock.id, device_id: LOCKER })).toBe("applied");
    expect(await send({ ...p1, command_id: lock.id })).toBe("applied");
    expect(await keptParts(lock.id)).toEqual([]);
    // A count or a type other than the parts already kept say.
    expect(await send(p1)).toBe("applied");
    expect(await send({ ...p2, parts: 3 })).toBe("applied");
    expect(await send({ ...p2, mime: "image/png" })).toBe("applied");
    expect(await keptParts(cmd.id)).toEqual([1]);
    expectError(await getPhoto(cmd.id), 404, "ERRORS.NOT_FOUND");
    expect(await photoRepository(h.db).find(lock.id)).toBeUndefined();
  });

  it("never gets past the wire schema with a type the cloud would not serve, or a part over its size", () => {
    const base = {
      type: "photo",
      gateway_id: "gw-a1",
      seq: 1,
      observed_at: "2025-01-01T00:00:00.000Z",
      command_id: randomUUID(),
      device_id: GUARD,
      part: 1,
      parts: 1,
      mime: "image/jpeg",
      data: randomBytes(PHOTO_PART_BYTES).toString("base64"),
    };
    expect(UpMessage.safeParse(base).success).toBe(true);
    expect(UpMessage.safeParse({ ...base, mime: "text/html" }).success).toBe(false);
    expect(
      UpMessage.safeParse({ ...base, data: randomBytes(PHOTO_PART_BYTES + 3).toString("base64") }).success,
    ).toBe(false);
    expect(UpMessage.safeParse({ ...base, data: "not base64!" }).success).toBe(false);
  });
});

describe("what else the photo route answers", () => {
  it("404 with a clear message for a command that takes no photo, and for a take-photo that ended in ERROR", async () => {
    const lock = await takePhoto(LOCKER_2);
    const notPhoto = await getPhoto(lock.id);
    expectError(notPhoto, 404, "ERRORS.NOT_FOUND");
    expect(notPhoto.json().error_message).toMatch(/is a lock: it takes no photo/);

    const cmd = await takePhoto();
    expect(
      await gateway.progress("gw-a1", cmd, "ERROR", { reason: "gateway error: camera: capture failed" }),
    ).toBe("applied");
    const failed = await getPhoto(cmd.id);
    expectError(failed, 404, "ERRORS.NOT_FOUND");
    expect(failed.json().error_message).toMatch(
      /ended in ERROR \(gateway error: camera: capture failed\): no photo/,
    );
    expect(failed.headers["retry-after"]).toBeUndefined();
  });

  describe("tenancy", () => {
    let photoId: string;
    let riderA: Caller;
    let riderB: Caller;
    let otherOperator: Caller;
    beforeAll(async () => {
      const cmd = await takePhoto();
      for (const p of partsOf(cmd, aJpeg(500))) await send(p);
      photoId = cmd.id;
      riderA = await rider(h, OP_A, "photo-rider-a");
      riderB = await rider(h, OP_B, "photo-rider-b");
      otherOperator = client(h, CLIENTS.other, OP_B);
    });

    it("answers another operator's client as for a command that does not exist", async () => {
      const f = riderFlow(h);
      const theirs = await f.request(otherOperator, photoUrl(photoId));
      const unknownId = randomUUID();
      const unknown = await f.request(otherOperator, photoUrl(unknownId));
      expectError(theirs, 404, "ERRORS.NOT_FOUND");
      expectError(unknown, 404, "ERRORS.NOT_FOUND");
      expect(theirs.json().error_message.replace(photoId, "{id}")).toBe(
        unknown.json().error_message.replace(unknownId, "{id}"),
      );
      expect(theirs.body).not.toContain("image");
    });

    it("refuses riders' tokens with 403 before looking anything up, their operator's photos included", async () => {
      const f = riderFlow(h);
      for (const who of [riderA, riderB]) {
        for (const id of [photoId, randomUUID()]) {
          const res = await f.request(who, photoUrl(id));
          expectError(res, 403, "ERRORS.FORBIDDEN");
        }
      }
    });

    it("asks for a token", async () => {
      expectError(await getPhoto(photoId, null), 401, "ERRORS.UNAUTHORIZED");
    });
  });
});
