import { commandUri } from "./present-command.ts";

/** Where a take-photo command's photo is served: the value of its RESPONSE_PHOTO_TAKEN event. */
export const photoUri = (commandId: string) => `${commandUri(commandId)}/photo`;
