import { writeFileSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { systemClock } from "../../shared/clock.ts";
import {
  buildMosquittoExport,
  parseListener,
  writeMosquittoExport,
} from "../gateway-link/mosquitto-export.ts";
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

program
  .command("mosquitto <file>")
  .description(
    "write passwd, acl and mosquitto.conf for a Mosquitto 2.x broker serving the manifest's gateways",
  )
  .requiredOption("--out <dir>", "directory to write into (created if missing)")
  .option("--prefix <prefix>", "MQTT topic prefix (default: MQTT_PREFIX or parking)")
  .option("--listener <host:port>", "address the broker listens on", "127.0.0.1:1883")
  .option(
    "--skip-hashed",
    "leave out gateways that only have a secret_hash (with a warning) instead of failing",
  )
  .option(
    "--user <name>",
    "user the broker switches to when started as root (Mosquitto's default: mosquitto)",
  )
  .addHelpText(
    "after",
    "\nThe cloud's user is MQTT_USERNAME (default cloud) with password MQTT_PASSWORD (required); gateway\n" +
      "secrets come from secret or secret_env. Example:\n" +
      "  MQTT_PASSWORD=… DEMO_GATEWAY_SECRET=… npm run manifest -- mosquitto manifests/demo-site.yaml --out ./mosquitto",
  )
  .action(
    (
      file: string,
      opts: { out: string; prefix?: string; listener: string; skipHashed?: boolean; user?: string },
    ) => {
      const manifest = loadManifest(file);
      const problems = checkManifest(manifest);
      if (problems.length) throw new Error(problems.join("\n"));
      const exp = buildMosquittoExport(manifest, process.env, {
        dir: opts.out,
        prefix: opts.prefix ?? process.env.MQTT_PREFIX ?? "parking",
        listener: parseListener(opts.listener),
        skipHashed: opts.skipHashed,
        user: opts.user,
      });
      for (const id of exp.skipped)
        console.warn(`warning: gateway ${id} left out: it only has a secret_hash`);
      const written = writeMosquittoExport(opts.out, exp);
      console.log(
        `${file}: ${exp.gatewayIds.length} gateways and the cloud user written to ${written.join(", ")}`,
      );
    },
  );

program.parseAsync().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
