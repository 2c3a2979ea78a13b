/** Retries an assertion until it passes or the deadline (real time) runs out; for I/O across processes. */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 5_000, everyMs = 20): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}
