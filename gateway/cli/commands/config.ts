import { existsSync, readFileSync } from "node:fs";
import type { Command } from "commander";
import { parse as parseYaml } from "yaml";
import { ConfigError, controlSocketPath, GatewayConfig, parseGatewayConfig } from "../../config.ts";
import { DEFAULT_SOCKET, type Wrap, withExamples } from "../context.ts";
import { EXIT } from "../exit-codes.ts";

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

export function registerConfig(program: Command, wrap: Wrap): void {
  const config = program.command("config").description("gateway configuration tools (no daemon needed)");
  withExamples(config, ["parkctl config validate /etc/parking-gateway/config.yaml"]);
  const validate = config
    .command("validate")
    .argument("<file>", "gateway config file (.yaml, .yml or .json)")
    .description("check a gateway config file and report every problem by key (exit 6 when it is invalid)")
    .action(
      wrap((ctx, [file = ""]) => {
        const { problems, warnings } = validateConfigFile(file);
        const valid = problems.length === 0;
        const out = ctx.out;
        if (out.json) out.data({ file, valid, problems, warnings });
        else {
          out.line(
            valid ? `${out.paint("green", "valid")}: ${file}` : `${out.paint("red", "invalid")}: ${file}`,
          );
          for (const p of problems) out.line(`  ${out.check("fail")}  ${p.path}: ${p.message}`);
          for (const w of warnings) out.line(`  ${out.check("warn")}  ${w.path}: ${w.message}`);
        }
        return valid ? EXIT.ok : EXIT.checkFailed;
      }),
    );
  withExamples(validate, [
    "parkctl config validate /etc/parking-gateway/config.yaml",
    "parkctl config validate new-config.yaml --json | jq -r '.problems[] | .path + \": \" + .message'",
  ]);
}
