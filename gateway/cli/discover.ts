/**
 * Where parkctl finds the daemon's control socket (gateway/cli/README.md, "Where the socket is"):
 * `--socket`, else the `control_socket` of `--config`, else `--gateway <id>` (a gateway of the demo, under
 * `<DATA_DIR>/gateways/<id>/`), else `$PARKCTL_SOCKET`, else the packaged default. When the socket is not
 * there, the error says where parkctl looked and how to point it elsewhere.
 */
import { existsSync, readdirSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { didYouMean } from "../../shared/cli/did-you-mean.ts";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { PACKAGE_ROOT } from "../../shared/node/package-root.ts";
import { GATEWAY_ID_PATTERN } from "../../shared/wire/topics.ts";
import { ControlUnreachableError } from "../control/control-client.ts";

export const DEFAULT_SOCKET = "/run/parking-gateway/control.sock";
/** The repository parkctl runs from (as source or built); `npm start` keeps the demo's state under its data/demo. */
export const REPO_ROOT = PACKAGE_ROOT;
export const DEMO_DATA_DIR = "data/demo";

export type SocketSource = "socket" | "config" | "gateway" | "env" | "default";
export type SocketChoice = { path: string; source: SocketSource; gateway?: string };

type Env = Record<string, string | undefined>;

/** Unreachable with advice: parkctl prints the hint under the message and exits 3. */
export class SocketNotFoundError extends ControlUnreachableError {
  constructor(
    path: string,
    message: string,
    readonly hint: string,
  ) {
    super(path, "not_running", message);
    this.name = "SocketNotFoundError";
  }
}

/** The demo's data directories to look in, first match wins: $DATA_DIR (from the repository, then from
 * the working directory when it is relative), then the repository's data/demo (the `npm start` default). */
export function demoDataDirs(env: Env, cwd: string, root = REPO_ROOT): string[] {
  const dirs: string[] = [];
  const dataDir = env.DATA_DIR?.trim();
  if (dataDir) {
    dirs.push(resolve(root, dataDir));
    if (!isAbsolute(dataDir)) dirs.push(resolve(cwd, dataDir));
  }
  dirs.push(resolve(root, DEMO_DATA_DIR));
  return [...new Set(dirs)];
}

export function demoSocketPath(dataDir: string, gatewayId: string): string {
  return join(dataDir, "gateways", gatewayId, "control.sock");
}

/** Gateway ids with a control socket under a demo data directory (the demo's running gateways). */
export function demoGatewaysIn(dataDir: string): string[] {
  const dir = join(dataDir, "gateways");
  try {
    return readdirSync(dir)
      .filter((id) => existsSync(demoSocketPath(dataDir, id)))
      .sort();
  } catch {
    return [];
  }
}

/** The control socket of the demo's gateway `id`, or an error naming every place parkctl looked. */
export function findDemoGateway(id: string, env: Env, cwd: string, root = REPO_ROOT): SocketChoice {
  if (!GATEWAY_ID_PATTERN.test(id))
    throw new CliExit(
      EXIT.usage,
      `--gateway ${JSON.stringify(id)}: a gateway id has letters, digits, '.', '_' and '-' only`,
    );
  const dirs = demoDataDirs(env, cwd, root);
  const candidates = dirs.map((dir) => demoSocketPath(dir, id));
  const found = candidates.find((p) => existsSync(p));
  if (found) return { path: found, source: "gateway", gateway: id };

  const running = [...new Set(dirs.flatMap((dir) => demoGatewaysIn(dir)))];
  const looked = candidates.map((p) => `\n  ${p}`).join("");
  const message = `no control socket for gateway ${id}; looked at:${looked}`;
  let hint: string;
  if (running.length > 0) hint = `gateways running there: ${running.join(", ")}${didYouMean(id, running)}`;
  else
    hint =
      "is the demo running? start it from the repository with `npm start`; if it runs with DATA_DIR=<dir>, " +
      "run parkctl with the same DATA_DIR; or pass --socket <path> or --config <file>";
  throw new SocketNotFoundError(candidates[0] ?? "", message, hint);
}

/**
 * The advice printed under "not running" for a socket found by `source`: under systemd the unit, for the
 * demo `npm start`, for a variable the variable.
 */
export function unreachableHint(choice: SocketChoice, env: Env, cwd: string, root = REPO_ROOT): string {
  switch (choice.source) {
    case "gateway":
      return `the demo that ran gateway ${choice.gateway} seems to have stopped; start it with \`npm start\``;
    case "env":
      return `PARKCTL_SOCKET=${choice.path}: is that daemon running? unset PARKCTL_SOCKET to use ${DEFAULT_SOCKET}, or pass --socket / --config / --gateway`;
    case "config":
      return "is the daemon of that config running? (systemctl status parking-gateway, or npm run dev:gateway -- --config <file>)";
    default: {
      const base =
        "check it with: systemctl status parking-gateway (or pass --socket / --config / --gateway <id>)";
      if (choice.source !== "default") return base;
      // A checkout with the demo running: the technician most likely wants one of its gateways.
      const running = [...new Set(demoDataDirs(env, cwd, root).flatMap((dir) => demoGatewaysIn(dir)))];
      return running.length > 0
        ? `${base}\nhint: the demo's gateways run here; pick one with --gateway <id>: ${running.join(", ")}`
        : base;
    }
  }
}
