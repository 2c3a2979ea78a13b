import type { Command } from "commander";
import type { CardKeysView } from "../../control/control-api.ts";
import { type Wrap, withExamples } from "../context.ts";
import { dash } from "../output.ts";

/** What the key cache holds for one card: the technician's answer to "why does my card not open?". */
export function registerKeys(program: Command, wrap: Wrap): void {
  const cmd = program
    .command("keys")
    .argument("<card>", "card id in hex, as printed on the card or by the reader (separators allowed)")
    .description("show a card's whitelist grants in the gateway's key cache")
    .action(
      wrap(async (ctx, [card = ""]) => {
        const k = await ctx.call<CardKeysView>("keys", { card });
        const out = ctx.out;
        if (out.json) return out.data({ keys: k });
        out.pairs([
          ["card", k.card_id],
          ["key version", String(k.version)],
          [
            "grants",
            k.grants.length === 0
              ? "none (a tap asks the cloud, and is refused offline)"
              : String(k.grants.length),
          ],
        ]);
        if (k.grants.length === 0) return;
        out.line();
        out.table(
          ["WHITELIST", "STATE", "EXPIRES", "MASTER", "LOCATIONS", "DEVICES"],
          k.grants.map((g) => [
            g.whitelist_id,
            g.state === "valid" ? out.paint("green", g.state) : out.paint("red", g.state),
            dash(g.expires_at),
            out.yesNo(g.is_master_key),
            String(g.location_ids.length),
            g.devices.length ? g.devices.join(",") : "-",
          ]),
        );
      }),
    );
  withExamples(cmd, ["parkctl keys 04a1b2c3d4", "parkctl keys 04:A1:B2:C3:D4 --json | jq .keys.grants"]);
}
