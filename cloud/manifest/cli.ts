import { writeFileSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { systemClock } from "../../shared/clock.ts";
import { openDb } from "../store/db.ts";
import { applyManifest, checkManifest } from "./apply-manifest.ts";
import { loadManifest } from "./load-manifest.ts";
import { manifestJsonSchema } from "./manifest-schema.ts";

/** `npm run manifest -- <command>`: validate, apply, or print the JSON Schema of a site manifest. */
const program = new Command("manifest")
  .description(
    "Site manifest of the parking cloud: operators, API clients, public areas, locations, gateways, devices",
  )
  .showHelpAfterError();

program
  .command("validate <file>")
  .description("check a manifest without applying it")
  .action((file: string) => {
    const problems = checkManifest(loadManifest(file));
    if (problems.length) throw new Error(problems.join("\n"));
    console.log(`${file}: valid`);
  });

program
  .command("apply <file>")
  .description("apply a manifest to the store named by DATABASE_URL or DATA_DIR (idempotent)")
  .addHelpText("after", "\nExample:\n  DATA_DIR=./data npm run manifest -- apply manifests/demo-site.yaml")
  .action(async (file: string) => {
    const manifest = loadManifest(file);
    const url = process.env.DATABASE_URL;
    const db = await openDb(
      url
        ? { kind: "postgres", url }
        : { kind: "sqlite", file: path.join(process.env.DATA_DIR ?? "./data", "cloud.db") },
    );
    try {
      const s = await applyManifest(db, manifest, systemClock);
      console.log(`${file}: applied (${s.created} created, ${s.updated} updated)`);
    } finally {
      await db.destroy();
    }
  });

program
  .command("schema")
  .description("print the JSON Schema of the manifest (or write it with --out)")
  .option("--out <file>", "write to a file instead of stdout")
  .action((opts: { out?: string }) => {
    const text = `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;
    if (opts.out) writeFileSync(opts.out, text);
    else process.stdout.write(text);
  });

program.parseAsync().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
