import { useEffect, useState } from "preact/hooks";

/** What a view read from the cloud, the cloud's refusal in its words, and a way to read it again. */
export type Loaded<T> = { data: T | null; error: string | null; reload: () => void };

/** Reads `load()` when `key` changes and on `reload()`; an answer to an older read is dropped. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loads, setLoads] = useState(0);
  useEffect(() => {
    let current = true;
    load().then(
      (d) => {
        if (!current) return;
        setData(d);
        setError(null);
      },
      (err: unknown) => current && setError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      current = false;
    };
  }, [key, loads]);
  return { data, error, reload: () => setLoads((n) => n + 1) };
}
