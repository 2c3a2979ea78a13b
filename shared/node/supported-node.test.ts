import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "./package-root.ts";
import { meetsEngines, unsupportedNodeMessage } from "./supported-node.ts";

const ENGINES = "^22.14.0 || ^24.0.0";

describe("supported Node (package.json engines)", () => {
  it("takes 22.14 and later 22.x and any 24, nothing else", () => {
    for (const v of ["22.14.0", "22.20.1", "24.0.0", "24.21.0"])
      expect(meetsEngines(v, ENGINES), v).toBe(true);
    for (const v of ["20.20.2", "22.13.9", "23.1.0", "25.0.0"])
      expect(meetsEngines(v, ENGINES), v).toBe(false);
  });

  it("names the command that ran, under scripts/with-node.sh 24, quoted for the shell", () => {
    const check = (argv: string[], env: Record<string, string> = {}, cwd = PACKAGE_ROOT) =>
      unsupportedNodeMessage({ versions: { node: "20.20.2" }, engines: ENGINES, argv, env, cwd });
    const prefix = `Node.js v20.20.2 is not supported (package.json engines: ${ENGINES}); run: `;
    expect(check(["node", `${PACKAGE_ROOT}/cloud/main.ts`], { npm_lifecycle_event: "dev:cloud" })).toBe(
      `${prefix}scripts/with-node.sh 24 npm run dev:cloud`,
    );
    expect(check(["node", `${PACKAGE_ROOT}/demo/main.ts`, "--help"], { npm_lifecycle_event: "start" })).toBe(
      `${prefix}scripts/with-node.sh 24 npm start -- --help`,
    );
    expect(check(["node", `${PACKAGE_ROOT}/dist/gateway/main.js`, "--config", "it's.yaml"])).toBe(
      `${prefix}scripts/with-node.sh 24 node dist/gateway/main.js --config 'it'\\''s.yaml'`,
    );
    // From elsewhere (a controller's /usr/local/bin/parkctl), paths are absolute.
    expect(check(["node", "/opt/parking/dist/gateway/cli/parkctl.js", "status"], {}, "/home/tech")).toBe(
      `${prefix}${PACKAGE_ROOT}/scripts/with-node.sh 24 node /opt/parking/dist/gateway/cli/parkctl.js status`,
    );
    expect(
      unsupportedNodeMessage({ versions: { node: "24.1.0" }, engines: ENGINES, argv: [], env: {}, cwd: "/" }),
    ).toBeNull();
  });
});
