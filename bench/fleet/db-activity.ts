/**
 * Where the cloud's database time goes, without pg_stat_statements (the shared server does not load it):
 * samples pg_stat_activity for the cloud's own connections (named by application_name) ten times a second
 * and counts what each was doing. A statement seen running in many samples is where the database's time
 * goes; all connections checked out in most samples means the cloud's pool is the queue.
 */
import pg from "pg";

const EVERY_MS = 100;

export function sampleDbActivity(o: { databaseUrl: string; applicationName: string; poolSize: number }) {
  const client = new pg.Client({ connectionString: o.databaseUrl });
  const byStatement = new Map<string, number>();
  let samples = 0;
  let active = 0;
  let checkedOut = 0;
  let full = 0;
  /** Per statement run (its backend and start), the longest it had been running when a sample saw it. */
  const runs = new Map<string, { ms: number; what: string }>();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();

  async function sample(): Promise<void> {
    const r = await client.query<{
      id: string;
      state: string;
      query: string;
      wait: string | null;
      ms: number;
    }>(
      `SELECT coalesce(leader_pid, pid) || ':' || query_start AS id, state, regexp_replace(query, '\\s+', ' ', 'g') AS query,
              wait_event_type || ':' || wait_event AS wait,
              extract(epoch FROM clock_timestamp() - query_start) * 1000 AS ms
         FROM pg_stat_activity
        WHERE application_name = $1 AND state <> 'idle'`,
      [o.applicationName],
    );
    samples++;
    // A connection in a transaction is checked out of the cloud's pool even while it waits for the cloud's
    // next statement ("idle in transaction"): all of them checked out means the pool is the queue.
    checkedOut += r.rows.length;
    if (r.rows.length >= o.poolSize) full++;
    for (const row of r.rows) {
      if (row.state !== "active") continue;
      active++;
      // The statement's shape: parameters are placeholders already; long IN lists collapse.
      const shape = row.query.replace(/\$\d+(, \$\d+)+/g, "$…").slice(0, 110);
      const key = row.wait ? `${shape} [waiting ${row.wait}]` : shape;
      byStatement.set(key, (byStatement.get(key) ?? 0) + 1);
      // Seen in several samples, or by a parallel query's workers too: one run, at its longest.
      const ms = Number(row.ms);
      if (ms > (runs.get(row.id)?.ms ?? -1)) runs.set(row.id, { ms, what: key.slice(0, 90) });
    }
  }

  return {
    async start(): Promise<void> {
      await client.connect();
      timer = setInterval(() => {
        running = running.then(sample).catch(() => {});
      }, EVERY_MS);
    },
    async stop(top = 8): Promise<string[]> {
      if (timer) clearInterval(timer);
      await running;
      await client.end();
      if (samples === 0) return [];
      return [
        `  database  the cloud's ${o.poolSize} connections: ${(checkedOut / samples).toFixed(1)} checked out on average ` +
          `(all in ${((100 * full) / samples).toFixed(0)}% of ${samples} samples), ${(active / samples).toFixed(1)} running a ` +
          "statement; the busiest statements (connections running it, on average, in % of one):",
        ...[...byStatement]
          .sort((a, b) => b[1] - a[1])
          .slice(0, top)
          .map(([q, n]) => `    ${((100 * n) / samples).toFixed(0).padStart(4)}%  ${q}`),
        "            the longest seen running (ms so far when sampled):",
        ...[...runs.values()]
          .sort((a, b) => b.ms - a.ms)
          .slice(0, 3)
          .map((l) => `    ${l.ms.toFixed(0).padStart(5)}  ${l.what}`),
      ];
    },
  };
}
