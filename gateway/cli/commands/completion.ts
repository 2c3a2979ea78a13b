import type { Command } from "commander";
import { CliExit, EXIT } from "../../../shared/cli/exit-codes.ts";
import { type Wrap, withExamples } from "../context.ts";

/** Completion scripts built from the command tree, so they never drift from it. */
export function registerCompletion(program: Command, wrap: Wrap): void {
  const cmd = program
    .command("completion")
    .argument("<shell>", "bash or zsh")
    .description("print a shell completion script")
    .action(
      wrap((ctx, [shell]) => {
        if (shell !== "bash" && shell !== "zsh")
          throw new CliExit(EXIT.usage, `no completion for shell "${shell}"`);
        ctx.out.line(script(program, shell));
      }),
    );
  withExamples(cmd, [
    "parkctl completion bash | sudo tee /etc/bash_completion.d/parkctl",
    "source <(parkctl completion zsh)   # in ~/.zshrc",
  ]);
}

function words(cmd: Command): string[] {
  return [
    ...cmd.commands.map((c) => c.name()),
    ...cmd.options.map((option) => option.long ?? "").filter(Boolean),
    "--help",
  ];
}

function script(program: Command, shell: "bash" | "zsh"): string {
  const cases = program.commands
    .map((c) => {
      const all = new Set([...words(c), ...words(program).filter((w) => w.startsWith("--"))]);
      return `    ${c.name()}) opts="${[...all].join(" ")}" ;;`;
    })
    .join("\n");
  const body = `_parkctl() {
  local cur=\${COMP_WORDS[COMP_CWORD]} opts
  case "\${COMP_WORDS[1]}" in
${cases}
    *) opts="${words(program).join(" ")}" ;;
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
complete -F _parkctl parkctl`;
  return shell === "zsh" ? `autoload -U +X bashcompinit && bashcompinit\n${body}` : body;
}
