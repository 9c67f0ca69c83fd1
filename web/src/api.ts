import { forgetKey, storedKey } from './session.ts';

/** A field the API refused, as problem+json names it (`body.horizon`). */
export interface FieldError {
  path: string;
  message: string;
}

/** A non-2xx answer of the API: its problem+json code, detail and field errors. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
  }

  /** The detail, then each field error on a line of its own. */
  describe(): string {
    return [this.message, ...this.errors.map((e) => `${e.path}: ${e.message}`)].join('\n');
  }
}

/** Listeners told when the API refuses the key (revoked, or a server restarted with other keys). */
const signedOut = new Set<() => void>();
export const onSignedOut = (listener: () => void): (() => void) => {
  signedOut.add(listener);
  return () => signedOut.delete(listener);
};

async function failure(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    const problem = JSON.parse(text) as { code?: string; detail?: string; title?: string; errors?: FieldError[] | null };
    return new ApiError(response.status, problem.code ?? 'error', problem.detail ?? problem.title ?? response.statusText, problem.errors ?? []);
  } catch {
    return new ApiError(response.status, 'error', text || response.statusText);
  }
}

/** A call to the API with the session's key as a bearer token; a 401 signs the tab out. */
export async function request(path: string, init: RequestInit = {}, key = storedKey()): Promise<Response> {
  const headers = new Headers(init.headers);
  if (key) headers.set('authorization', `Bearer ${key}`);
  const response = await fetch(path, { ...init, headers });
  if (response.ok) return response;
  const error = await failure(response);
  if (response.status === 401 && key === storedKey()) {
    forgetKey();
    signedOut.forEach((listener) => listener());
  }
  throw error;
}

export async function getJson<T>(path: string): Promise<T> {
  return (await (await request(path)).json()) as T;
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const response = await request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await response.json()) as T;
}

export async function patchJson<T>(path: string, body: unknown): Promise<T> {
  const response = await request(path, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await response.json()) as T;
}

export async function postForm<T>(path: string, form: FormData): Promise<T> {
  return (await (await request(path, { method: 'POST', body: form })).json()) as T;
}

/** Saves a blob under a file name, the way a download link does. */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Downloads an API file (Parquet results) with the key, which a plain link could not send. */
export async function download(path: string, fileName: string): Promise<void> {
  saveBlob(await (await request(path)).blob(), fileName);
}
