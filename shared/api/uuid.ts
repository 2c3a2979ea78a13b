import { z } from "zod";

/**
 * A UUID, normalised to lower case: UUIDs compare case-insensitively (RFC 9562) and every id is stored
 * in lower case, so `/devices/<UPPER-CASE ID>` finds the device. Every path id and manifest id uses it.
 */
export const Uuid = z.uuid().toLowerCase();
