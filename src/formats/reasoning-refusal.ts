/**
 * A provider's 400 for reasoning it cannot verify, told by its message: each API's words are data in its own folder
 * (`REASONING_REFUSALS` beside its upstream), read by this one test.
 */
export function refusesReasoning(patterns: readonly RegExp[]): (status: number, body: string) => boolean {
  return (status, body) => status === 400 && patterns.some((pattern) => pattern.test(body));
}
