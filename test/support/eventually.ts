/**
 * Retries an assertion until it passes or the deadline (real time) runs out; for I/O across processes.
 * The deadline only bounds a failure: a passing assertion returns as soon as it holds, so the default is
 * generous enough for a CI machine running other suites and CPU hogs beside this one.
 */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 20_000, everyMs = 20): Promise<T> {
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
