/** What a command may touch: its arguments come separately, its output goes through these. */
export interface CommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Reads all of stdin as UTF-8 text. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The message of an error, for a person; never a stack trace for expected failures. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
