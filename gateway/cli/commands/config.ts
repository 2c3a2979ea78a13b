import type { Command } from "commander";
import { EXIT } from "../../../shared/cli/exit-codes.ts";
import { type Wrap, withExamples } from "../context.ts";

export function registerConfig(program: Command, wrap: Wrap): void {
  const config = program.command("config").description("gateway configuration tools (no daemon needed)");
  withExamples(config, ["parkctl config validate /etc/parking-gateway/config.yaml"]);
  const validate = config
    .command("validate")
    .argument("<file>", "gateway config file (.yaml, .yml or .json)")
    .description("check a gateway config file and report every problem by key (exit 6 when it is invalid)")
    .action(
      wrap(async (ctx, [file = ""]) => {
        const { validateConfigFile } = await import("../config-file.ts");
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
