import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { fitMap, tileOrigin, tileUrl } from "../shared/domain/map-tiles.ts";
import type { LocationSummary } from "./locations-api.ts";
import { Link } from "./router.tsx";

const HEIGHT = 240;
/** The widest the map is drawn; on a phone it is the screen's width. */
const MAX_WIDTH = 720;

/** The note the overview shows where it has no map: no tiles configured, or none of them loaded. */
export const NO_TILES = "Map tiles unavailable";

/**
 * A small map of the locations above the overview's list, on the tiles CONSOLE_MAP_TILES names: 256-px tiles
 * placed in a box at the zoom that fits every location, and a marker linking to each location's page. With no
 * template, or once every tile failed to load, it says so in a note and the list stands alone.
 */
export function LocationsMap({ template, rows }: { template: string | null; rows: LocationSummary[] }) {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  // Failures are counted per set of tiles (another filter or width asks for others): which set, how many.
  const [failed, setFailed] = useState({ of: "", count: 0 });

  useLayoutEffect(() => {
    const measure = () => setWidth(Math.min(box.current?.clientWidth ?? 0, MAX_WIDTH));
    measure();
    addEventListener("resize", measure);
    return () => removeEventListener("resize", measure);
  }, []);

  const view = template ? fitMap(rows, width, HEIGHT) : null;
  const tiles = view ? `${view.zoom}:${view.tiles.map((t) => `${t.x}/${t.y}`).join()}` : "";
  const failOne = () => setFailed((f) => ({ of: tiles, count: f.of === tiles ? f.count + 1 : 1 }));
  // A template whose tiles all fail (no network, a wrong address) leaves the list alone, as with none.
  const unavailable =
    !template || (view !== null && failed.of === tiles && failed.count >= view.tiles.length);
  return (
    <div ref={box} class="map-box">
      {unavailable ? (
        <p class="note">{NO_TILES}</p>
      ) : (
        view && (
          <figure
            class="map"
            style={{ width: `${width}px`, height: `${HEIGHT}px` }}
            aria-label="Map of the locations"
          >
            {view.tiles.map((t) => (
              <img
                key={`${view.zoom}/${t.x}/${t.y}/${t.left}`}
                class="map-tile"
                src={tileUrl(template, view.zoom, t.x, t.y)}
                alt=""
                width={256}
                height={256}
                style={{ left: `${Math.round(t.left)}px`, top: `${Math.round(t.top)}px` }}
                onError={failOne}
              />
            ))}
            {rows.map((l, i) => {
              const m = view.markers[i];
              if (!m) return null;
              return (
                <span
                  key={l.id}
                  class="map-marker"
                  style={{ left: `${Math.round(m.x)}px`, top: `${Math.round(m.y)}px` }}
                >
                  <Link
                    href={`/console/locations/${encodeURIComponent(l.id)}`}
                    label={`${l.name} on the map`}
                  >
                    {l.code}
                  </Link>
                </span>
              );
            })}
            <figcaption>Tiles: {tileOrigin(template)}</figcaption>
          </figure>
        )
      )}
    </div>
  );
}
