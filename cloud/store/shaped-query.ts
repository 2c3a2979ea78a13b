import { type Compilable, type CompiledQuery, createQueryId, type Kysely } from "kysely";

/** What runs a compiled query: the store or one of its transactions. */
export type QueryRunner = Pick<Kysely<never>, "executeQuery">;

/** Marks a value's place in a query built once for its shape; no value of the app begins with NUL. */
const MARK = "\u0000";

type Shape = { sql: string; query: CompiledQuery["query"]; slots: ({ name: string } | { value: unknown })[] };

/**
 * Queries compiled once per shape (which filters they have), their values bound by name at each run.
 * Kysely builds and compiles a query afresh every time, and for a list page that cost as much again as
 * everything else the list does beside SQLite's reads (docs/decisions/sessions-and-billing.md). The first
 * run of a shape builds the query with a marker in place of each value, and keeps the SQL and where each
 * value goes: the SQL is what Kysely compiles, word for word, and the values are bound as parameters.
 * Keep one per store (the SQL is the dialect's); `shape` must name everything that changes the SQL.
 */
export function shapedQueries(runner: QueryRunner, capacity = 256) {
  const shapes = new Map<string, Shape>();

  function compile<V extends Record<string, unknown>>(
    values: V,
    build: (v: V) => Compilable<unknown>,
  ): Shape {
    const marked = Object.fromEntries(Object.keys(values).map((k) => [k, `${MARK}${k}`])) as V;
    const compiled = build(marked).compile();
    const slots = compiled.parameters.map((p) =>
      typeof p === "string" && p.startsWith(MARK) ? { name: p.slice(1) } : { value: p },
    );
    const bound = new Set(slots.flatMap((s) => ("name" in s ? [s.name] : [])));
    const unbound = Object.keys(values).filter((k) => !bound.has(k));
    // A value the SQL holds as text would be the first run's for every later run.
    if (unbound.length > 0)
      throw new Error(`shaped query ${compiled.sql}: values not bound as parameters: ${unbound}`);
    return { sql: compiled.sql, query: compiled.query, slots };
  }

  return {
    /**
     * The rows of the query `build` makes of `values`, for a query of that `shape`. `build` sees markers,
     * not the values, the first time: it must put each value in the query as a value, never decide on it.
     */
    async run<Row, V extends Record<string, unknown>>(
      shape: string,
      values: V,
      build: (v: V) => Compilable<Row>,
      /** Where to run it instead: a transaction of the store (the SQL is the same). */
      on: QueryRunner = runner,
    ): Promise<Row[]> {
      let known = shapes.get(shape);
      if (!known) {
        known = compile(values, build);
        if (shapes.size >= capacity) shapes.clear();
        shapes.set(shape, known);
      }
      const parameters = known.slots.map((s) => ("name" in s ? values[s.name] : s.value));
      const query: CompiledQuery<Row> = {
        sql: known.sql,
        query: known.query,
        queryId: createQueryId(),
        parameters,
      };
      return (await on.executeQuery(query)).rows;
    },
  };
}
