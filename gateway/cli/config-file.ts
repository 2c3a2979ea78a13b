/**
 * What parkctl needs of the gateway config parser (zod, yaml): validating a file, and the control
 * socket of `--config`. Imported only by the commands that read a config, so the others start without it.
 */
import { existsSync, readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import {
  ConfigError,
  controlSocketPath,
  GatewayConfig,
  loadGatewayConfig,
  parseGatewayConfig,
} from "../config.ts";
import { DEFAULT_SOCKET } from "./discover.ts";

/** The control socket named by the config `file`; a config it cannot read is a usage error. */
export function controlSocketOf(file: string): string {
  try {
    return controlSocketPath(loadGatewayConfig(file));
  } catch (err) {
    const why = err instanceof ConfigError ? err.message : String(err);
    throw new CliExit(EXIT.usage, `cannot take the control socket from --config ${file}:\n${why}`);
  }
}

export type Finding = { path: string; message: string };

/**
 * Validates a gateway config file without a daemon: every schema problem by key path (failures), plus
 * advice that does not stop the daemon from starting (warnings).
 */
export function validateConfigFile(file: string): { problems: Finding[]; warnings: Finding[] } {
  let data: unknown;
  try {
    const raw = readFileSync(file, "utf8");
    data = file.endsWith(".json") ? JSON.parse(raw) : parseYaml(raw);
  } catch (err) {
    return {
      problems: [{ path: "(file)", message: err instanceof Error ? err.message : String(err) }],
      warnings: [],
    };
  }
  const schema = GatewayConfig.safeParse(data);
  if (!schema.success) {
    const problems = schema.error.issues.map((i) => ({
      path: i.path.join(".") || "(root)",
      message: i.message,
    }));
    return { problems, warnings: [] };
  }
  try {
    const cfg = parseGatewayConfig(data, file);
    return { problems: [], warnings: advice(cfg) };
  } catch (err) {
    // Rules beyond the schema (e.g. secret or secret_file) come back as one ConfigError.
    const message = err instanceof ConfigError ? err.message.replace(`${file}: `, "") : String(err);
    return { problems: [{ path: "(root)", message }], warnings: [] };
  }
}

function advice(cfg: GatewayConfig): Finding[] {
  const warnings: Finding[] = [];
  // Under the packaged unit the daemon listens in its RuntimeDirectory unless the config says otherwise.
  const socket = controlSocketPath(cfg, { RUNTIME_DIRECTORY: "/run/parking-gateway" });
  if (socket !== DEFAULT_SOCKET)
    warnings.push({
      path: "control_socket",
      message: `the daemon will listen on ${socket}, but parkctl looks for ${DEFAULT_SOCKET} unless given --config or --socket; leave control_socket unset to use the unit's RuntimeDirectory`,
    });
  if (cfg.secret)
    warnings.push({
      path: "secret",
      message: "the broker password is in the config file; prefer secret_file (mode 0640)",
    });
  if (cfg.secret_file && !existsSync(cfg.secret_file))
    warnings.push({ path: "secret_file", message: `${cfg.secret_file} does not exist on this machine` });
  return warnings;
}
