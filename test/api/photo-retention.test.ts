import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { photoRepository } from "../../cloud/photos/photo-repository.ts";
import {
  applyPhotoRetention,
  createPhotoPruner,
  PHOTO_RETENTION,
} from "../../cloud/photos/photo-retention.ts";
import { photoParts } from "../../gateway/features/photo-upload.ts";
import { Command } from "../../shared/api/command.ts";
import { PHOTO_PART_BYTES } from "../../shared/wire/messages.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx } from "../support/fixture-site.ts";
import { gatewayReports } from "../support/gateway-reports.ts";

/** Photos are kept 30 days and 50 per device (docs/decisions/photos.md), on both stores. */

const GUARD = fx.guard("gw-a1");
const DAY_MS = 24 * 3_600_000;
const MAX_AGE_MS = PHOTO_RETENTION.maxAgeMs;

let h: CloudHarness;
const gateway = gatewayReports(() => h);
beforeEach(async () => {
  h = await startCloudHarness();
});
afterEach(() => h.close());

/**
 * A take-photo on the camera GUARD whose photo (of `size` bytes) then arrives, all `parts` or the first only,
 * observed at `observedAt` on the gateway's clock (default the cloud's now).
 */
async function photo(
  opts: { size?: number; onlyFirstPart?: boolean; observedAt?: string } = {},
): Promise<Command> {
  const res = await h.call(CLIENTS.admin, {
    method: "POST",
    url: `/device/v1/devices/${GUARD}/commands`,
    payload: { command: "take-photo" },
  });
  expect(res.statusCode, res.body).toBe(200);
  const cmd = Command.parse(res.json());
  const parts = photoParts(
    { command_id: cmd.id, device_id: GUARD },
    { bytes: randomBytes(opts.size ?? 64), mime: "image/jpeg" },
  );
  if ("refused" in parts) throw new Error(parts.refused);
  for (const part of opts.onlyFirstPart ? parts.slice(0, 1) : parts)
    await h.report("gw-a1", {
      ...part,
      gateway_id: "gw-a1",
      seq: gateway.nextSeq(),
      observed_at: opts.observedAt ?? h.clock.now().toISOString(),
    });
  return cmd;
}

/** A fresh token each time: the clock moves a month in these tests, past any token's hour. */
async function getPhoto(id: string) {
  const token = await h.freshToken(CLIENTS.admin);
  return h.call(null, {
    method: "GET",
    url: `/device/v1/commands/${id}/photo`,
    headers: { authorization: `Bearer ${token}` },
  });
}

async function expectDeleted(id: string) {
  const res = await getPhoto(id);
  expect(res.statusCode, res.body).toBe(404);
  expect(res.headers["retry-after"]).toBeUndefined();
  expect(res.json()).toMatchObject({
    error_code: "ERRORS.NOT_FOUND",
    error_message: expect.stringMatching(/was deleted on .*: photos are kept 30 days and 50 per device$/),
  });
}

/** The camera's photos still kept, oldest arrival first. */
const keptPhotos = async () => (await photoRepository(h.db).keptOf(GUARD)).reverse();

/** The parts kept of a photo still being assembled. */
const keptParts = (id: string) => photoRepository(h.db).partsOf(id);

describe("photo retention", () => {
  it("keeps a device's newest 50 photos: the 51st deletes the oldest at once", async () => {
    const taken: Command[] = [];
    for (let i = 0; i <= PHOTO_RETENTION.perDevice; i++) {
      taken.push(await photo());
      h.clock.advance(60_000);
    }
    const [oldest, second] = taken as [Command, Command];
    await expectDeleted(oldest.id);
    expect((await getPhoto(second.id)).statusCode).toBe(200);
    expect(await keptPhotos()).toEqual(taken.slice(1).map((c) => c.id));
    // The deleted one keeps its row, without its bytes.
    expect(await photoRepository(h.db).find(oldest.id)).toMatchObject({
      bytes: "",
      pruned_at: expect.any(String),
    });
  });

  it("deletes a photo 30 days after it arrived, and parts of a photo that never became whole", async () => {
    const kept = await photo();
    const half = await photo({ size: PHOTO_PART_BYTES + 10, onlyFirstPart: true });
    expect(await keptParts(kept.id)).toEqual([]);
    expect(await keptParts(half.id)).toEqual([{ part: 1, parts: 2, mime: "image/jpeg" }]);
    h.clock.advance(MAX_AGE_MS - 1);
    expect(await applyPhotoRetention(h.db, h.clock.now())).toEqual({ pruned: 0, parts: 0 });
    expect((await getPhoto(kept.id)).statusCode).toBe(200);

    h.clock.advance(1);
    expect(await applyPhotoRetention(h.db, h.clock.now())).toEqual({ pruned: 1, parts: 1 });
    await expectDeleted(kept.id);
    expect(await keptParts(half.id)).toEqual([]);
    // A second round finds nothing more; a late copy of a deleted photo's part does not bring it back.
    expect(await applyPhotoRetention(h.db, h.clock.now())).toEqual({ pruned: 0, parts: 0 });
  });

  it("a late copy of a deleted photo's part is known as a repeat: no parts kept, still deleted", async () => {
    const cmd = await photo();
    h.clock.advance(MAX_AGE_MS);
    await applyPhotoRetention(h.db, h.clock.now());
    const parts = photoParts(
      { command_id: cmd.id, device_id: GUARD },
      { bytes: randomBytes(64), mime: "image/jpeg" },
    );
    if ("refused" in parts) throw new Error(parts.refused);
    for (const part of parts)
      await h.report("gw-a1", {
        ...part,
        gateway_id: "gw-a1",
        seq: gateway.nextSeq(),
        observed_at: h.clock.now().toISOString(),
      });
    expect(await keptParts(cmd.id)).toEqual([]);
    await expectDeleted(cmd.id);
  });

  it("runs on its own every hour on the injected clock", async () => {
    const cmd = await photo();
    h.clock.advance(MAX_AGE_MS);
    const lines: string[] = [];
    let heard = () => {};
    const deleted = new Promise<void>((r) => (heard = r));
    const log = pino(
      new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          if (String(chunk).includes("photos past their retention deleted")) heard();
          done();
        },
      }),
    );
    const pruner = createPhotoPruner({ db: h.db, clock: h.clock, log });
    pruner.start();
    try {
      h.clock.advance(3_600_000 - 1);
      expect((await getPhoto(cmd.id)).statusCode).toBe(200);
      h.clock.advance(1);
      await deleted;
      await expectDeleted(cmd.id);
      expect(lines.filter((l) => l.includes('"level":50'))).toEqual([]);
    } finally {
      pruner.stop();
    }
  });

  it("takes the days from received_at, not from the gateway's clock", async () => {
    // A gateway whose clock is a year behind: its photo is as new as when it arrived.
    const yearAgo = new Date(h.clock.now().getTime() - 365 * DAY_MS).toISOString();
    const cmd = await photo({ observedAt: yearAgo });
    expect(await photoRepository(h.db).find(cmd.id)).toMatchObject({ taken_at: yearAgo });
    expect(await applyPhotoRetention(h.db, h.clock.now())).toEqual({ pruned: 0, parts: 0 });
    expect((await getPhoto(cmd.id)).statusCode).toBe(200);
  });
});
