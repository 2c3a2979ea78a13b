/** The time left to a deadline ("2:41 left"), from the cloud's now (ms): the browser's own clock may be wrong. */
export function countdown(timeoutAt: string, now: number): string {
  const left = Math.round((Date.parse(timeoutAt) - now) / 1000);
  if (left <= 0) return "deadline passed";
  const m = Math.floor(left / 60);
  const s = String(left % 60).padStart(2, "0");
  return `${m}:${s} left`;
}

/** A length of time as the console shows a gateway's uptime: "45 s", "12 min", "5 h 3 min", "3 d 4 h". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
