/**
 * Where in a site manifest's data a problem is, and how people name that place: the objects by the names
 * their author gave them rather than by index.
 */
export type ManifestPath = (string | number)[];

/** A problem at a path of the manifest's data; `related` is another place it concerns (a duplicate's first). */
export type RawProblem = { path: ManifestPath; message: string; related?: ManifestPath };

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

export function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let v = data;
  for (const seg of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

// ---------------------------------------------------------------------------------------------------------
// Naming: paths of indexes → the names people gave the objects.

/** Lists whose items are named objects, and how each is called. */
const NAMED: Record<string, { noun: string; key: string; alt?: string }> = {
  operators: { noun: "operator", key: "name", alt: "id" },
  clients: { noun: "client", key: "client_id" },
  public_areas: { noun: "public area", key: "id" },
  locations: { noun: "location", key: "code" },
  gateways: { noun: "gateway", key: "id" },
  devices: { noun: "device", key: "alias" },
  price_lists: { noun: "price list", key: "code" },
  riders: { noun: "rider", key: "user_id" },
  access_lists: { noun: "access list", key: "name", alt: "id" },
  webhooks: { noun: "webhook", key: "id" },
  whitelists: { noun: "whitelist", key: "name", alt: "id" },
  staff: { noun: "staff", key: "email" },
  superadmins: { noun: "superadmin", key: "email" },
};

function nameOf(v: unknown, index: number): string {
  if (typeof v !== "string" || v.trim() === "") return `#${index + 1}`;
  return /^[A-Za-z][\w.:-]*$/.test(v) ? v : JSON.stringify(v);
}

/** `where` and `key` of a path: `location CS-L › gateway gw-1 › device "4"` and `bus.channel`. */
export function describePath(data: unknown, path: ManifestPath): { where: string; key: string } {
  const parts: string[] = [];
  let key: string[] = [];
  let node: unknown = data;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] as string | number;
    const next = path[i + 1];
    const named = typeof seg === "string" ? NAMED[seg] : undefined;
    const item = typeof next === "number" ? valueAt(node, [seg, next]) : undefined;
    if (named && typeof next === "number" && isObj(item)) {
      const name = str(item[named.key]) ?? (named.alt ? str(item[named.alt]) : null);
      parts.push(`${named.noun} ${nameOf(name, next)}`);
      key = [];
      node = item;
      i++;
      continue;
    }
    if (typeof seg === "number") key.push(`[${seg}]`);
    else key.push(key.length ? `.${seg}` : seg);
    node = valueAt(node, [seg]);
  }
  // With a single operator (the usual site), naming it on every line says nothing.
  const single = isObj(data) && arr(data.operators).length === 1;
  if (single && parts.length > 1 && parts[0]?.startsWith("operator ")) parts.shift();
  return { where: parts.join(" › "), key: key.join("") };
}
