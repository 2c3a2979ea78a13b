/**
 * The console overview's small map, as arithmetic (docs/decisions/console.md, "The overview's map"): a tile
 * URL template (CONSOLE_MAP_TILES, `https://tile.example/{z}/{x}/{y}.png`), Web Mercator in 256-px tiles
 * as slippy-map servers cut them, the zoom that fits every location in a box, and the tiles and marker
 * positions that fill it. Pure: the config checks the template with it, the console draws with it.
 */

export const TILE_PX = 256;
/** Closer than this, a single location would fill the box with one street. */
export const MAX_ZOOM = 16;
const PLACEHOLDERS = ["{z}", "{x}", "{y}"] as const;

/** Why `template` is not a usable tile URL template, or null when it is. */
export function tileTemplateProblem(template: string): string | null {
  for (const p of PLACEHOLDERS)
    if (!template.includes(p)) return `needs ${PLACEHOLDERS.join(", ")}; ${p} is missing`;
  const rest = PLACEHOLDERS.reduce((t, p) => t.replaceAll(p, "0"), template);
  if (/[{}]/.test(rest)) return "only {z}, {x} and {y} are filled in (no {s} subdomains)";
  let url: URL;
  try {
    url = new URL(rest);
  } catch {
    return "not an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "an http or https URL";
  if (url.username || url.password) return "no credentials in the URL";
  return null;
}

/** The origin the tiles come from (what the console's CSP lets images load from). */
export function tileOrigin(template: string): string {
  return new URL(PLACEHOLDERS.reduce((t, p) => t.replaceAll(p, "0"), template)).origin;
}

/** A tile's address: the template with its zoom, column and row. */
export function tileUrl(template: string, z: number, x: number, y: number): string {
  return template.replaceAll("{z}", String(z)).replaceAll("{x}", String(x)).replaceAll("{y}", String(y));
}

export type LatLon = { latitude: number; longitude: number };
export type Point = { x: number; y: number };

/** Where a coordinate lies on the whole world's map at `zoom`, in pixels from its top left corner. */
export function project({ latitude, longitude }: LatLon, zoom: number): Point {
  const size = TILE_PX * 2 ** zoom;
  // Web Mercator stops short of the poles, as the tiles do.
  const lat = (Math.max(-85.0511, Math.min(85.0511, latitude)) * Math.PI) / 180;
  return {
    x: ((longitude + 180) / 360) * size,
    y: ((1 - Math.log(Math.tan(lat) + 1 / Math.cos(lat)) / Math.PI) / 2) * size,
  };
}

export type MapView = {
  zoom: number;
  /** Each tile to draw: its column and row (the column wrapped round the world) and where it goes in the box. */
  tiles: { x: number; y: number; left: number; top: number }[];
  /** Each point's place in the box, in the order given. */
  markers: Point[];
};

/**
 * The closest zoom (at most MAX_ZOOM) at which every point fits a `width` × `height` box with `pad` pixels
 * to spare on each side, centred on them; null for no points or no room.
 */
export function fitMap(points: readonly LatLon[], width: number, height: number, pad = 16): MapView | null {
  if (points.length === 0 || width <= 2 * pad || height <= 2 * pad) return null;
  let zoom = MAX_ZOOM;
  let px = points.map((p) => project(p, zoom));
  const spans = () => {
    const xs = px.map((p) => p.x);
    const ys = px.map((p) => p.y);
    return { minX: Math.min(...xs), maxX: Math.max(...xs), minY: Math.min(...ys), maxY: Math.max(...ys) };
  };
  let s = spans();
  while (zoom > 0 && (s.maxX - s.minX > width - 2 * pad || s.maxY - s.minY > height - 2 * pad)) {
    zoom--;
    px = points.map((p) => project(p, zoom));
    s = spans();
  }
  const left = (s.minX + s.maxX) / 2 - width / 2;
  const top = (s.minY + s.maxY) / 2 - height / 2;
  const count = 2 ** zoom;
  const tiles: MapView["tiles"] = [];
  for (let ty = Math.floor(top / TILE_PX); ty * TILE_PX < top + height; ty++) {
    if (ty < 0 || ty >= count) continue; // above or below the world
    for (let tx = Math.floor(left / TILE_PX); tx * TILE_PX < left + width; tx++)
      tiles.push({
        x: ((tx % count) + count) % count,
        y: ty,
        left: tx * TILE_PX - left,
        top: ty * TILE_PX - top,
      });
  }
  return { zoom, tiles, markers: px.map((p) => ({ x: p.x - left, y: p.y - top })) };
}
