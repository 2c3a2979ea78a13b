import { AppError } from "../../shared/api/errors.ts";
import { type Principal, requireClient } from "../auth/principal.ts";
import { commandRepository } from "../commands/command-repository.ts";
import type { Db } from "../store/db.ts";
import type { PhotosTable } from "../store/tables/photo-tables.ts";
import { photoRepository } from "./photo-repository.ts";
import { PHOTO_RETENTION } from "./photo-retention.ts";

export type ServedPhoto = { mime: PhotosTable["mime"]; bytes: Buffer };

/** How soon to ask again for a photo still on its way (its parts follow the SUCCESS within moments). */
const RETRY_AFTER_S = "2";

/**
 * Photos taken by take-photo, for the operator whose device took them (docs/decisions/photos.md). A
 * rider's token gets 403 before anything is looked up; another operator's command is as missing as one
 * that does not exist.
 */
export function createPhotoService(deps: { db: Db }) {
  const commands = commandRepository(deps.db);
  const photos = photoRepository(deps.db);

  return {
    async get(principal: Principal, commandId: string): Promise<ServedPhoto> {
      const client = requireClient(principal, "A command's photo");
      const command = await commands.findForOperator(client.operatorId, commandId);
      if (!command) throw new AppError("ERRORS.NOT_FOUND", `Command ${commandId} not found`);
      if (command.name !== "take-photo")
        throw new AppError(
          "ERRORS.NOT_FOUND",
          `Command ${commandId} is a ${command.name}: it takes no photo`,
        );
      const photo = await photos.findForOperator(client.operatorId, commandId);
      if (photo?.pruned_at)
        throw new AppError(
          "ERRORS.NOT_FOUND",
          `The photo of command ${commandId} was deleted on ${photo.pruned_at}: photos are kept ` +
            `${PHOTO_RETENTION.maxAgeMs / 86_400_000} days and ${PHOTO_RETENTION.perDevice} per device`,
        );
      if (photo) return { mime: photo.mime, bytes: Buffer.from(photo.bytes, "base64") };
      if (command.state.value === "ERROR")
        throw new AppError(
          "ERRORS.NOT_FOUND",
          `Command ${commandId} ended in ERROR (${command.state.reason}): no photo was taken`,
        );
      throw new AppError(
        "ERRORS.NOT_FOUND",
        `The photo of command ${commandId} has not arrived yet (the command is ${command.state.value}); try again shortly`,
        { command_state: command.state.value },
        { "retry-after": RETRY_AFTER_S },
      );
    },
  };
}

export type PhotoService = ReturnType<typeof createPhotoService>;
