import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import { PHOTO_MIME_TYPES } from "../../../shared/wire/messages.ts";
import type { PhotoService } from "../../photos/photo-service.ts";
import { principalOf } from "../authenticate.ts";
import { ANY_ROUTE_ERRORS, PATH_PARAM_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

const EXTENSION: Record<(typeof PHOTO_MIME_TYPES)[number], string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
};

const Image = z.any().describe("The photo's bytes, as the camera produced them");

/** 403: a rider's token (photos are the operator's); 404: no such photo of the caller's operator, or not yet. */
const errors = { ...ANY_ROUTE_ERRORS, ...PATH_PARAM_ERRORS, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

export function registerPhotoRoutes(app: FastifyInstance, photos: PhotoService) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get("/device/v1/commands/:command_id/photo", {
    schema: {
      tags: ["commands"],
      summary: "Get the photo a take-photo command took",
      description:
        "The address is the value of the command's RESPONSE_PHOTO_TAKEN event. The gateway sends the photo " +
        "with the command's SUCCESS; until all of it has arrived the answer is 404 with Retry-After. " +
        "Another command, or one whose take-photo ended in ERROR, is 404 too, as is a photo deleted by " +
        "retention (kept 30 days and 50 per device; the message says when). Riders' tokens: 403.",
      params: z.object({ command_id: PathId }),
      response: {
        200: {
          description: "The photo",
          content: Object.fromEntries(PHOTO_MIME_TYPES.map((m) => [m, { schema: Image }])),
        },
        ...errors,
      },
    },
    handler: async (request, reply) => {
      const id = request.params.command_id;
      const photo = await photos.get(principalOf(request), id);
      return reply
        .type(photo.mime)
        .header("content-disposition", `inline; filename="${id}.${EXTENSION[photo.mime]}"`)
        .header("cache-control", "private, max-age=3600")
        .header("x-content-type-options", "nosniff")
        .send(photo.bytes);
    },
  });
}
