import type { Logger } from "pino";
import type { PhotoPart } from "../../shared/wire/messages.ts";
import { commandRepository } from "../commands/command-repository.ts";
import type { Executor } from "../store/db.ts";
import { photoRepository } from "./photo-repository.ts";
import { keepNewestPhotos } from "./photo-retention.ts";

/**
 * Keeps one part of a take-photo photo, in the transaction that applies the outbox message (once per
 * (gateway, seq)). Parts come in any order, before or after the command's SUCCESS; when the last one is
 * there the photo is assembled and its parts go. A part about a command that is not a take-photo of a
 * device this gateway drives, or that disagrees with the parts already kept, is dropped (S30).
 * Returns whether the part was kept.
 */
export async function applyPhotoPart(
  trx: Executor,
  o: {
    gatewayId: string;
    msg: PhotoPart;
    now: Date;
    log: Logger;
    refuse?: (reason: "foreign_command" | "invalid") => void;
  },
): Promise<boolean> {
  const { gatewayId, msg, log } = o;
  const where = { gateway_id: gatewayId, command_id: msg.command_id, part: msg.part };
  const commands = commandRepository(trx);
  const found = await commands.findWithGateway(msg.command_id);
  if (
    found?.command.name !== "take-photo" ||
    found.command.device_id !== msg.device_id ||
    found.gatewayId !== gatewayId
  ) {
    log.warn(where, "photo for a command this gateway does not own: dropped");
    o.refuse?.("foreign_command");
    return false;
  }
  if (msg.part > msg.parts) {
    log.warn({ ...where, parts: msg.parts }, "photo part numbered past its count: dropped");
    o.refuse?.("invalid");
    return false;
  }
  // Two replicas applying the last two parts at once would each miss the other's part: the second
  // waits for the first to commit, then counts both.
  await commands.hold(msg.command_id);
  const photos = photoRepository(trx);
  if (await photos.isAssembled(msg.command_id)) return false; // assembled already: this part is a repeat
  const kept = await photos.partsOf(msg.command_id);
  if (kept.some((k) => k.parts !== msg.parts || k.mime !== msg.mime)) {
    log.warn({ ...where, parts: msg.parts }, "photo part disagrees with the parts kept: dropped");
    o.refuse?.("invalid");
    return false;
  }
  if (!kept.some((k) => k.part === msg.part)) {
    await photos.addPart({
      command_id: msg.command_id,
      part: msg.part,
      parts: msg.parts,
      mime: msg.mime,
      data: msg.data,
      received_at: o.now.toISOString(),
    });
    kept.push({ part: msg.part, parts: msg.parts, mime: msg.mime });
  }
  if (kept.length === msg.parts) await assemble(trx, { ...o, operatorId: found.command.operator_id });
  return true;
}

/** Joins the parts into the photo and drops them. */
async function assemble(trx: Executor, o: { msg: PhotoPart; operatorId: string; now: Date; log: Logger }) {
  const { msg } = o;
  const photos = photoRepository(trx);
  const parts = await photos.partData(msg.command_id);
  // Each part is base64 of its own bytes: decode them one by one, then encode the whole once.
  const bytes = Buffer.concat(parts.map((data) => Buffer.from(data, "base64")));
  await photos.insert({
    command_id: msg.command_id,
    device_id: msg.device_id,
    operator_id: o.operatorId,
    mime: msg.mime,
    bytes: bytes.toString("base64"),
    size: bytes.length,
    taken_at: msg.observed_at,
    received_at: o.now.toISOString(),
    pruned_at: null,
  });
  await photos.dropParts(msg.command_id);
  // The device's oldest photos past its cap go now, not at the next retention round.
  await keepNewestPhotos(trx, msg.device_id, o.now);
  o.log.info({ command_id: msg.command_id, size: bytes.length, parts: msg.parts }, "photo assembled");
}
