/**
 * The Hugging Face Hub's HTTP interface, the part `models install --from-hub` needs (the layout
 * huggingface_hub's hf_api.py and file_download.py use):
 *
 * - `GET {endpoint}/api/models/{repo}/revision/{revision}`: the repository at a branch, tag or
 *   commit; `sha` is the commit, so every file comes from one commit;
 * - `GET {endpoint}/api/models/{repo}/tree/{commit}?recursive=true`: its files, `oid` the git blob
 *   id, `lfs.oid` the SHA-256 of an LFS file's content; pages follow the `Link: <...>; rel="next"` header;
 * - `GET {endpoint}/{repo}/resolve/{commit}/{path}`: a file; an LFS file redirects to a CDN, the
 *   redirect carrying `X-Linked-Etag` (its SHA-256) and `X-Linked-Size`; `Range` resumes it.
 *
 * HF_TOKEN goes to the endpoint's own origin only, never to the CDN a redirect names.
 */
import { InstallError, interrupted, messageOf, TransientError } from './install-error.ts';

export interface HubSettings {
  /** HF_ENDPOINT, without a trailing slash. */
  readonly endpoint: string;
  /** HF_TOKEN; null sends none. */
  readonly token: string | null;
}

/** A file of a repository's listing at one commit. */
export interface HubFile {
  readonly path: string;
  readonly size: number;
  /** The git blob id (SHA-1 of `blob <size>\0` and the content); for an LFS file, of its pointer. */
  readonly gitOid: string;
  /** The SHA-256 of the content, for an LFS file; null for a file kept in git itself. */
  readonly sha256: string | null;
}

/** What the Hub said of a file before its bytes: the first answer, before any redirect. */
export interface FileAnswer {
  readonly response: Response;
  /** `X-Linked-Etag`, else `ETag`, without quotes or `W/`; null when absent. */
  readonly etag: string | null;
  /** `X-Linked-Size`, else the total of `Content-Range`, else `Content-Length` of a whole answer. */
  readonly size: number | null;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
const REPO_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/;

export function checkRepoId(repo: string): void {
  if (!REPO_ID.test(repo) || repo.includes('..'))
    throw new InstallError(`'${repo}' is not a Hugging Face repository id: it is owner/name, such as amazon/chronos-2`, 'usage');
}

const normaliseEtag = (etag: string | null) => (etag ? etag.replace(/^W\//, '').replace(/"/g, '') : null);

function sizeOf(first: Response, last: Response): number | null {
  const linked = first.headers.get('x-linked-size');
  if (linked) return Number(linked);
  const range = /\/(\d+)$/.exec(last.headers.get('content-range') ?? '');
  if (range) return Number(range[1]);
  const length = last.headers.get('content-length');
  return last.status === 200 && length ? Number(length) : null;
}

export class HubClient {
  constructor(
    private readonly settings: HubSettings,
    private readonly signal: AbortSignal,
  ) {}

  get endpoint(): string {
    return this.settings.endpoint;
  }

  /** The commit a branch, tag or commit of `repo` names. */
  async commitOf(repo: string, revision: string): Promise<string> {
    const what = `${repo} at revision ${revision}`;
    const response = await this.get(`${this.endpoint}/api/models/${repo}/revision/${encodeURIComponent(revision)}`, {}, what);
    const info = (await this.json(response, what)) as { sha?: unknown };
    if (typeof info.sha !== 'string' || !/^[0-9a-f]{40}$/.test(info.sha)) throw new InstallError(`the Hub's answer for ${what} names no commit (sha)`);
    return info.sha;
  }

  /** Every file of `repo` at `commit`, across the listing's pages. */
  async files(repo: string, commit: string): Promise<HubFile[]> {
    const what = `the file list of ${repo}`;
    const files: HubFile[] = [];
    let url: string | null = `${this.endpoint}/api/models/${repo}/tree/${commit}?recursive=true`;
    while (url) {
      const response = await this.get(url, {}, what);
      const entries = await this.json(response, what);
      if (!Array.isArray(entries)) throw new InstallError(`the Hub's answer for ${what} is not a list of files`);
      for (const entry of entries as { type?: string; path: string; size: number; oid: string; lfs?: { oid: string; size: number } }[]) {
        if (entry.type !== 'file') continue;
        files.push({ path: entry.path, size: entry.lfs?.size ?? entry.size, gitOid: entry.oid, sha256: entry.lfs?.oid ?? null });
      }
      const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '');
      url = next ? new URL(next[1], url).href : null;
    }
    return files;
  }

  /** A file's bytes from `offset` on (a `Range` request when above 0). */
  async file(repo: string, commit: string, file: string, offset: number): Promise<FileAnswer> {
    const url = `${this.endpoint}/${repo}/resolve/${commit}/${file.split('/').map(encodeURIComponent).join('/')}`;
    const headers: Record<string, string> = offset > 0 ? { range: `bytes=${offset}-` } : {};
    const { first, last } = await this.follow(url, headers, `${file} of ${repo}`);
    return {
      response: last,
      etag: normaliseEtag(first.headers.get('x-linked-etag') ?? first.headers.get('etag')),
      size: sizeOf(first, last),
    };
  }

  private async get(url: string, headers: Record<string, string>, what: string): Promise<Response> {
    return (await this.follow(url, headers, what)).last;
  }

  /** A GET that follows redirects itself, so that the token stays with the Hub's origin. */
  private async follow(url: string, headers: Record<string, string>, what: string): Promise<{ first: Response; last: Response }> {
    let first: Response | undefined;
    let target = url;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const response = await this.request(target, headers);
      first ??= response;
      if (!REDIRECTS.has(response.status)) {
        if (response.ok) return { first, last: response };
        throw await this.refusal(response, what);
      }
      await response.body?.cancel();
      const location = response.headers.get('location');
      if (!location) throw new InstallError(`the Hub redirected the request for ${what} without a Location`);
      target = new URL(location, target).href;
    }
    throw new InstallError(`the Hub redirected the request for ${what} more than ${MAX_REDIRECTS} times`);
  }

  private async request(url: string, headers: Record<string, string>): Promise<Response> {
    const ownOrigin = new URL(url).origin === new URL(this.endpoint).origin;
    const auth: Record<string, string> = ownOrigin && this.settings.token ? { authorization: `Bearer ${this.settings.token}` } : {};
    try {
      // identity: a compressed answer's length is not the file's, and a Range would count compressed bytes.
      return await fetch(url, { headers: { ...headers, ...auth, 'accept-encoding': 'identity' }, redirect: 'manual', signal: this.signal });
    } catch (error) {
      if (this.signal.aborted) throw interrupted();
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new TransientError(`cannot reach ${new URL(url).origin}: ${cause?.code ?? cause?.message ?? messageOf(error)}`, 'failed', [
        'HF_ENDPOINT names the Hub, or a mirror of it, that checkpoints are downloaded from; or install from a local folder with --checkpoint',
      ]);
    }
  }

  private async json(response: Response, what: string): Promise<unknown> {
    try {
      return await response.json();
    } catch (error) {
      throw new InstallError(`the Hub's answer for ${what} is not JSON: ${messageOf(error)}`);
    }
  }

  private async refusal(response: Response, what: string): Promise<InstallError> {
    await response.body?.cancel();
    const said = response.headers.get('x-error-message');
    const status = `HTTP ${response.status}${said ? `: ${said}` : ''}`;
    if (response.status === 401 || response.status === 403) {
      const fix = this.settings.token
        ? 'the token in HF_TOKEN cannot read it: accept the model\u2019s terms on its Hub page, or use a token that can'
        : 'it may be gated or private: set HF_TOKEN to a token that can read it';
      return new InstallError(`the Hub refused ${what} (${status}); ${fix}`);
    }
    if (response.status === 404) return new InstallError(`${what} is not on ${this.endpoint} (${status})`);
    if (response.status === 429 || response.status >= 500) return new TransientError(`the Hub failed to answer for ${what} (${status})`);
    return new InstallError(`the Hub refused ${what} (${status})`);
  }
}
