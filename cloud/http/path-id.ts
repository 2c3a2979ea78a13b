import { z } from "zod";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An object's id in a path. A UUID is normalised to lower case like every stored id; any other value is
 * kept as given and simply names nothing, so each route answers it as its status table says (spec:
 * Errors): 404 where the route has one, an empty list on the device list, which has no 404.
 */
export const PathId = z
  .string()
  .overwrite((s) => (UUID.test(s) ? s.toLowerCase() : s))
  .meta({ format: "uuid", description: "A UUID; any other value names no object" });
