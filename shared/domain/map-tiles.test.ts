import { describe, expect, it } from "vitest";
import { fitMap, MAX_ZOOM, project, TILE_PX, tileOrigin, tileTemplateProblem, tileUrl } from "./map-tiles.ts";

const AMSTERDAM = [
  { latitude: 52.3791, longitude: 4.9003 },
  { latitude: 52.358, longitude: 4.8812 },
  { latitude: 52.3762, longitude: 4.9156 },
];

describe("a tile URL template", () => {
  it("takes an http or https URL with {z}, {x} and {y}", () => {
    expect(tileTemplateProblem("https://tile.example/{z}/{x}/{y}.png")).toBeNull();
    expect(tileTemplateProblem("http://127.0.0.1:8081/t?z={z}&x={x}&y={y}")).toBeNull();
  });

  it("names what is wrong with any other", () => {
    expect(tileTemplateProblem("https://tile.example/{z}/{x}.png")).toMatch(/\{y\} is missing/);
    expect(tileTemplateProblem("https://{s}.tile.example/{z}/{x}/{y}.png")).toMatch(/no \{s\}/);
    expect(tileTemplateProblem("/tiles/{z}/{x}/{y}.png")).toBe("not an absolute URL");
    expect(tileTemplateProblem("ftp://tile.example/{z}/{x}/{y}.png")).toBe("an http or https URL");
    expect(tileTemplateProblem("https://me:pw@tile.example/{z}/{x}/{y}.png")).toBe(
      "no credentials in the URL",
    );
  });

  it("gives the tiles' origin and each tile's address", () => {
    expect(tileOrigin("https://tile.example:8443/{z}/{x}/{y}.png")).toBe("https://tile.example:8443");
    expect(tileUrl("https://tile.example/{z}/{x}/{y}.png?z={z}", 3, 4, 5)).toBe(
      "https://tile.example/3/4/5.png?z=3",
    );
  });
});

describe("the map that fits the locations", () => {
  it("projects as slippy-map tiles are cut: the null island in the middle of the world", () => {
    expect(project({ latitude: 0, longitude: 0 }, 0)).toEqual({ x: 128, y: 128 });
    const north = project({ latitude: 90, longitude: 180 }, 1);
    expect(north.x).toBe(2 * TILE_PX);
    expect(north.y).toBeCloseTo(0, 0);
  });

  it("zooms as close as every location fits, with every marker inside the box and covered by a tile", () => {
    const view = fitMap(AMSTERDAM, 640, 240);
    expect(view).not.toBeNull();
    const { zoom, tiles, markers } = view as NonNullable<typeof view>;
    expect(zoom).toBe(13);
    expect(fitMap(AMSTERDAM, 640, 240, 16)?.zoom).toBe(zoom);
    expect(fitMap(AMSTERDAM, 200, 240)?.zoom).toBe(zoom - 1);
    for (const m of markers) {
      expect(m.x).toBeGreaterThanOrEqual(16);
      expect(m.x).toBeLessThanOrEqual(640 - 16);
      expect(m.y).toBeGreaterThanOrEqual(16);
      expect(m.y).toBeLessThanOrEqual(240 - 16);
      expect(
        tiles.some((t) => t.left <= m.x && m.x < t.left + TILE_PX && t.top <= m.y && m.y < t.top + TILE_PX),
      ).toBe(true);
    }
  });

  it("stops at the closest zoom for one location, and at the whole world for the far ends of it", () => {
    expect(fitMap([AMSTERDAM[0] as never], 300, 200)?.zoom).toBe(MAX_ZOOM);
    const world = fitMap(
      [
        { latitude: 80, longitude: -179 },
        { latitude: -80, longitude: 179 },
      ],
      300,
      200,
    );
    expect(world?.zoom).toBe(0);
    // Only the world's one tile row exists: none above or below it, columns wrapped round.
    expect(world?.tiles.every((t) => t.y === 0 && t.x === 0)).toBe(true);
  });

  it("draws nothing without locations or without room", () => {
    expect(fitMap([], 640, 240)).toBeNull();
    expect(fitMap(AMSTERDAM, 30, 240)).toBeNull();
  });
});
