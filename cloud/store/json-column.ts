declare const holds: unique symbol;

/**
 * The text of a JSON column that holds a `T`. Branded so that only `toJson` writes one and a plain string
 * (or the JSON of something else) does not type-check; the repositories read it back with `fromJson`.
 */
export type Json<T> = string & { readonly [holds]: T };

export function toJson<T>(value: T): Json<T> {
  return JSON.stringify(value) as Json<T>;
}

/** Trusts the column: only `toJson` wrote it. Columns with defaults to fill in go through zod instead. */
export function fromJson<T>(text: Json<T>): T {
  return JSON.parse(text) as T;
}
