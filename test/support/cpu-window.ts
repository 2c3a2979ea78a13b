/**
 * CPU time (user + system, in ms) this process spends while the test waits `ms` of real time with nothing
 * due. The one place a test lets real time pass on purpose: a busy loop (a read retried at once on a
 * vanished device, a reconnect without a wait) is only visible as CPU burnt while nothing should happen,
 * and such a loop costs about the whole window (and more with the thread pool), while an idle process
 * costs a few ms even on a loaded machine, so a bound of a third of the window tells them apart.
 * The least of two windows: a busy loop burns both, while a one-off cost (a major collection of the heap
 * the suites before this one left in the shared worker: 150 ms once in CI) lands in one.
 */
export async function cpuWhileIdle(ms = 300): Promise<number> {
  const one = async () => {
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, ms));
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000;
  };
  return Math.min(await one(), await one());
}
