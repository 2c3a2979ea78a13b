import type { CloudConfig } from "./config.ts";

type NetError = NodeJS.ErrnoException & { port?: number; address?: string; hostname?: string };

/**
 * Turns a failure of `startCloud` into a message that names the variable to change: a port already taken
 * (PORT, MQTT_PORT, METRICS_PORT), an address this machine does not have (HOST), a data directory it cannot write
 * (DATA_DIR), a database it cannot reach (DATABASE_URL, shown without its password).
 */
export function explainCloudStartError(err: unknown, cfg: CloudConfig): string {
  const e = err as NetError;
  const msg = err instanceof Error ? err.message : String(err);
  const embedded = !cfg.MQTT_URL;
  const ports: string[] = [];
  if (e.port !== undefined) {
    if (e.port === cfg.PORT) ports.push("PORT");
    if (embedded && e.port === cfg.MQTT_PORT) ports.push("MQTT_PORT");
    if (e.port === cfg.METRICS_PORT && ports.length === 0) ports.push("METRICS_PORT");
  }
  const at = `${e.address ?? cfg.HOST}:${e.port ?? "?"}`;
  switch (e.code) {
    case "EADDRINUSE": {
      if (ports.length === 2)
        return `PORT and MQTT_PORT are both ${cfg.PORT}: the HTTP API and the embedded MQTT broker need a port each`;
      const name = ports[0] ?? "PORT or MQTT_PORT";
      return `${name}=${e.port ?? "?"}: ${at} is already in use (another cloud or \`npm start\` running?); stop it, or set ${name} to a free port`;
    }
    case "EACCES":
      if (e.syscall === "listen" || e.port !== undefined) {
        const name = ports[0] ?? "PORT or MQTT_PORT";
        return `${name}=${e.port ?? "?"}: not allowed to listen on ${at} (ports below 1024 need privileges); set ${name} to a port above 1023`;
      }
      return `DATA_DIR=${cfg.DATA_DIR}: permission denied (${msg})`;
    case "EADDRNOTAVAIL":
      return `HOST=${cfg.HOST}: this machine has no such address (${at}); use 127.0.0.1, 0.0.0.0 or one of its own addresses`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      if (cfg.DATABASE_URL && e.hostname && cfg.DATABASE_URL.includes(e.hostname))
        return `DATABASE_URL: cannot resolve the database host ${e.hostname}`;
      return `HOST=${cfg.HOST}: cannot resolve ${e.hostname ?? cfg.HOST}`;
    case "ECONNREFUSED":
      if (cfg.DATABASE_URL)
        return `DATABASE_URL: nothing answers at ${databaseAddress(cfg.DATABASE_URL)} (${msg})`;
      if (cfg.MQTT_URL) return `MQTT_URL=${cfg.MQTT_URL}: the broker refused the connection`;
      return msg;
    case "EROFS":
    case "ENOTDIR":
      return `DATA_DIR=${cfg.DATA_DIR}: cannot create or write it (${msg})`;
    default:
      if (
        cfg.DATABASE_URL &&
        /password authentication|database .* does not exist|role .* does not exist/.test(msg)
      )
        return `DATABASE_URL (${databaseAddress(cfg.DATABASE_URL)}): ${msg}`;
      return msg;
  }
}

/** host:port/database of a postgres URL, never its user or password. */
function databaseAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
  } catch {
    return "(unparsable URL)";
  }
}
