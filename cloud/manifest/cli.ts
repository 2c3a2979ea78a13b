// First: on an unsupported Node this stops with what to run instead, before the rest loads.
import "../../shared/node/supported-node.ts";
import { existsSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { BROKEN_PIPE_EXIT, exitQuietlyOnBrokenPipe } from "../../shared/node/broken-pipe.ts";
import { runSubcommands } from "../../shared/node/command-line.ts";
import { systemClock } from "../../shared/node/system-clock.ts";
import { packageVersion } from "../../shared/node/version.ts";
import { type Db, openDb } from "../store/db.ts";
import { applyManifest } from "./apply-manifest.ts";
import { type ManifestReport, readManifest } from "./load-manifest.ts";
import { formatProblem } from "./manifest-problems.ts";
import { manifestJsonSchema, type SiteManifest } from "./manifest-schema.ts";
import { buildMosquittoExport, parseListener, writeMosquittoExport } from "./mosquitto-export.ts";

/**
 * `npm run manifest -- <command>`: validate, apply, export for Mosquitto, or print the JSON Schema of a
 * site manifest. Exit codes follow parkctl's table (gateway/cli/README.md): 0 ok, 1 unexpected, 2 usage,
 * 3 the database is unreachable, 6 the manifest (or the environment it names) is invalid.
 */

const EXIT_CODES_HELP = `Exit codes (parkctl's table):
  0  ok
  1  unexpected error
  2  usage error
  3  database unreachable (DATABASE_URL, or DATA_DIR not writable)
  6  the manifest is invalid: every problem is listed, with its file line
  ${BROKEN_PIPE_EXIT}  the reader of its output went away (| head)`;

exitQuietlyOnBrokenPipe();

const program = new Command("manifest")
  .description(
    "Site manifest of the parking cloud: operators, API clients, public areas, locations, gateways, devices",
  )
  .version(packageVersion(), "-V, --version", "print the version")
  .helpOption("-h, --help", "show this help")
  .showHelpAfterError("(run with --help for usage)")
  .addHelpText(
    "after",
    `
Examples:
  $ npm run manifest -- validate manifests/demo-site.yaml
  $ DEMO_CLIENT_SECRET=… DEMO_GATEWAY_SECRET=… DATA_DIR=./data npm run manifest -- apply manifests/demo-site.yaml
  $ npm run manifest -- schema --out docs/site-manifest.schema.json

${EXIT_CODES_HELP}`,
  );

const sum = (ns: number[]) => ns.reduce((a, b) => a + b, 0);
function inventory(m: SiteManifest): string {
  const locations = m.operators.flatMap((op) => op.locations);
  const gateways = locations.flatMap((l) => l.gateways);
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? "" : "s"}`;
  return [
    plural(m.operators.length, "operator"),
    plural(locations.length, "location"),
    plural(gateways.length, "gateway"),
    plural(sum(gateways.map((g) => g.devices.length)), "device"),
  ].join(", ");
}

/** The report's problems on stderr (apply, mosquitto), then exit 6. */
function failOnProblems(report: ManifestReport, what: string): SiteManifest {
  if (report.manifest) return report.manifest;
  const n = report.problems.length;
  const lines = report.problems.map((p) => `  ${formatProblem(report.file, p)}`);
  throw new CliExit(
    EXIT.checkFailed,
    `${report.file}: ${n} problem${n === 1 ? "" : "s"}; ${what}:\n${lines.join("\n")}`,
  );
}

program
  .command("validate")
  .argument("<file>", "manifest (.yaml, .yml or .json)")
  .description(
    "check a manifest without applying it: schema, cross-references, and the secret_env variables apply will read (exit 6 when invalid)",
  )
  .option(
    "--skip-env",
    "do not check that the secret_env variables are set (validating where the secrets are not)",
  )
  .option("--json", "print the result as JSON (schema_version 1) instead of text")
  .addHelpText(
    "after",
    "\nExamples:\n  $ npm run manifest -- validate manifests/demo-site.yaml\n  $ npm run manifest -- validate my-site.yaml --skip-env --json | jq -r '.problems[] | \"\\(.line): \\(.message)\"'",
  )
  .action((file: string, opts: { skipEnv?: boolean; json?: boolean }) => {
    const report = readManifest(file, { env: opts.skipEnv ? undefined : process.env });
    const valid = report.manifest !== null;
    if (opts.json) {
      process.stdout.write(
        `${JSON.stringify({ schema_version: 1, file, valid, problems: report.problems }, null, 2)}\n`,
      );
    } else if (report.manifest) {
      console.log(`${file}: valid (${inventory(report.manifest)})`);
    } else {
      const n = report.problems.length;
      console.log(`${file}: invalid, ${n} problem${n === 1 ? "" : "s"}:`);
      for (const p of report.problems) console.log(`  ${formatProblem(file, p)}`);
    }
    if (!valid) process.exitCode = EXIT.checkFailed;
  });

program
  .command("apply")
  .argument("<file>", "manifest (.yaml, .yml or .json)")
  .description(
    "apply a manifest to the store named by DATABASE_URL or DATA_DIR (idempotent); nothing is written when it is invalid",
  )
  .addHelpText(
    "after",
    "\nExamples:\n  $ DATA_DIR=./data npm run manifest -- apply manifests/demo-site.yaml\n  $ DATABASE_URL=postgres://… npm run manifest -- apply my-site.yaml",
  )
  .action(async (file: string) => {
    // Everything apply needs is checked before the store is opened, so an invalid manifest leaves no trace.
    const manifest = failOnProblems(readManifest(file, { env: process.env }), "nothing was applied");
    const url = process.env.DATABASE_URL;
    const target = url
      ? { kind: "postgres" as const, url }
      : { kind: "sqlite" as const, file: path.join(process.env.DATA_DIR || "./data", "cloud.db") };
    const created = target.kind === "sqlite" ? newSqliteFiles(target.file) : null;
    let db: Db;
    try {
      db = await openDb(target);
    } catch (err) {
      created?.remove();
      throw new CliExit(EXIT.unreachable, storeProblem(err, target));
    }
    try {
      const s = await applyManifest(db, manifest, systemClock);
      const where = target.kind === "sqlite" ? target.file : "DATABASE_URL";
      console.log(`${file}: applied (${s.created} created, ${s.updated} updated) to ${where}`);
    } catch (err) {
      await db.destroy();
      created?.remove();
      throw err;
    }
    await db.destroy();
  });

program
  .command("schema")
  .description("print the JSON Schema of the manifest (or write it with --out)")
  .option("--out <file>", "write to a file instead of stdout")
  .addHelpText("after", "\nExample:\n  $ npm run manifest -- schema --out docs/site-manifest.schema.json")
  .action((opts: { out?: string }) => {
    const text = `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;
    if (opts.out) writeFileSync(opts.out, text);
    else process.stdout.write(text);
  });

program
  .command("mosquitto")
  .argument("<file>", "manifest (.yaml, .yml or .json)")
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
  .option(
    "--cloud-users <names>",
    "comma-separated broker users of the cloud, one per replica (default: MQTT_USERNAME or cloud)",
  )
  .addHelpText(
    "after",
    "\nThe cloud's user is MQTT_USERNAME (default cloud) with password MQTT_PASSWORD (required); gateway\n" +
      "secrets come from secret or secret_env. Replicas of the cloud need a user each (--cloud-users), all\n" +
      "with MQTT_PASSWORD. Example:\n" +
      "  MQTT_PASSWORD=… DEMO_GATEWAY_SECRET=… npm run manifest -- mosquitto manifests/demo-site.yaml --out ./mosquitto",
  )
  .action(
    (
      file: string,
      opts: {
        out: string;
        prefix?: string;
        listener: string;
        skipHashed?: boolean;
        user?: string;
        cloudUsers?: string;
      },
    ) => {
      // secret_env is checked by the export itself (a hashed-only gateway may be skipped with a warning).
      const manifest = failOnProblems(readManifest(file), "nothing was written");
      let exp: ReturnType<typeof buildMosquittoExport>;
      try {
        exp = buildMosquittoExport(manifest, process.env, {
          dir: opts.out,
          prefix: opts.prefix ?? process.env.MQTT_PREFIX ?? "parking",
          listener: parseListener(opts.listener),
          skipHashed: opts.skipHashed,
          user: opts.user,
          cloudUsers: opts.cloudUsers
            ?.split(",")
            .map((u) => u.trim())
            .filter(Boolean),
        });
      } catch (err) {
        // What the manifest and the environment give cannot be exported (a hashed-only secret, no MQTT_PASSWORD).
        throw new CliExit(EXIT.checkFailed, `${file}: ${(err as Error).message}; nothing was written`);
      }
      for (const id of exp.skipped)
        console.warn(`warning: gateway ${id} left out: it only has a secret_hash`);
      const written = writeMosquittoExport(opts.out, exp);
      const cloud =
        exp.cloudUsers.length > 1 ? `the cloud users ${exp.cloudUsers.join(", ")}` : "the cloud user";
      console.log(`${file}: ${exp.gatewayIds.length} gateways and ${cloud} written to ${written.join(", ")}`);
    },
  );

/**
 * The SQLite file (and its directory) as they are before apply opens them: `remove()` deletes what the
 * failed run created, so a failed apply leaves no stray database behind.
 */
function newSqliteFiles(file: string): { remove(): void } {
  const dir = path.dirname(file);
  const dirExisted = existsSync(dir);
  const fileExisted = existsSync(file);
  return {
    remove() {
      if (!fileExisted)
        for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) rmSync(f, { force: true });
      if (!dirExisted)
        try {
          rmdirSync(dir);
        } catch {
          // not empty (something else was written there): leave it
        }
    },
  };
}

function storeProblem(
  err: unknown,
  target: { kind: "sqlite"; file: string } | { kind: "postgres"; url: string },
) {
  const msg = err instanceof Error ? err.message : String(err);
  if (target.kind === "sqlite") return `cannot open the SQLite store ${target.file} (DATA_DIR): ${msg}`;
  let where = "(unparsable URL)";
  try {
    const u = new URL(target.url);
    where = `${u.hostname}:${u.port || "5432"}${u.pathname}`; // never the user or password
  } catch {}
  const code = (err as { code?: string }).code;
  return `cannot reach the database at ${where} (DATABASE_URL): ${code && !msg.includes(code) ? `${code} ` : ""}${msg}`;
}

// Commander's own errors (unknown command or option, missing argument) are usage errors, exit 2.
for (const command of program.commands)
  command.addHelpText("after", "\nExit codes: as `manifest --help` lists them (6: the manifest is invalid).");
runSubcommands(program);
