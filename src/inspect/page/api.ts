/**
 * The inspector's API, with the key the person typed: kept in this tab's sessionStorage, sent as a header,
 * never put in a URL (where history, logs and Referer would keep it).
 */
const KEY = "parley-inspector-key";

export class NeedsKey extends Error {
  constructor(readonly wrong: boolean) {
    super(wrong ? "that key was refused" : "this gateway needs an API key");
  }
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function rememberKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}

async function call(path: string): Promise<Response> {
  const key = storedKey();
  const response = await fetch(path, {
    headers: key === null ? {} : { "x-api-key": key },
    credentials: "omit",
    cache: "no-store",
  });
  if (response.status === 401) throw new NeedsKey(key !== null);
  if (!response.ok) {
    let message = `${response.status}`;
    try {
      const body = (await response.json()) as { error?: { message?: string } };
      message = body.error?.message ?? message;
    } catch {
      // Not JSON: the status says enough.
    }
    throw new ApiError(response.status, message);
  }
  return response;
}

export async function getJson<T>(path: string): Promise<T> {
  return (await (await call(path)).json()) as T;
}

export async function getText(path: string): Promise<string> {
  return (await call(path)).text();
}
