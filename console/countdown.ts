/** The time left to a deadline ("2:41 left"), from the cloud's now (ms): the browser's own clock may be wrong. */
export function countdown(timeoutAt: string, now: number): string {
  const left = Math.round((Date.parse(timeoutAt) - now) / 1000);
  if (left <= 0) return "deadline passed";
  const m = Math.floor(left / 60);
  const s = String(left % 60).padStart(2, "0");
  return `${m}:${s} left`;
}
