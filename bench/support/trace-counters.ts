/**
 * What a running gateway's trace writer recorded and dropped, from its /metrics: a writer that kept up by
 * dropping would look cheap, and a store that stays small by dropping would look bounded.
 */
export async function traceCounters(gatewayUrl: string): Promise<{ recorded: number; dropped: number }> {
  const metrics = await (await fetch(`${gatewayUrl}/metrics`)).text();
  const total = (pattern: RegExp) =>
    metrics
      .split("\n")
      .filter((line) => pattern.test(line))
      .reduce((sum, line) => sum + Number(line.split(" ").pop()), 0);
  return {
    recorded: total(/^parley_traces_recorded_total /),
    dropped: total(/^parley_traces_dropped_total[{ ]/),
  };
}
