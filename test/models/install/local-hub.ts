/**
 * A Hugging Face Hub on 127.0.0.1, in the Hub's URL layout and headers, for the install tests:
 * the revision and tree APIs (paged by `Link`), `resolve` answering small files itself (ETag: the
 * git blob id) and redirecting LFS files to a second server standing in for the CDN (another
 * origin, as cdn-lfs.hf.co is), with `X-Linked-Etag` (the SHA-256) and `X-Linked-Size`; Range
 * requests are answered with 206. Faults can be queued per file: a connection that breaks off
 * after some bytes, or a file served with one byte changed.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RepoFile {
  readonly path: string;
  readonly content: Buffer;
  /** Kept in Git LFS (as safetensors are on the Hub): redirected to the CDN. */
  readonly lfs: boolean;
}

export type Fault = { readonly breakAfter: number } | { readonly corrupt: true };

export interface SeenRequest {
  readonly server: 'hub' | 'cdn';
  readonly url: string;
  readonly authorization: string | undefined;
  readonly range: string | undefined;
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const gitBlobId = (data: Buffer | string) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(data)}\0`)
    .update(data)
    .digest('hex');
const lfsPointer = (content: Buffer) => `version https://git-lfs.github.com/spec/v1\noid sha256:${sha256(content)}\nsize ${content.length}\n`;

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export class LocalHub {
  readonly requests: SeenRequest[] = [];
  /** Faults for the next requests of a file's bytes, by path; each request takes the first. */
  readonly faults = new Map<string, Fault[]>();
  private readonly hub = http.createServer((req, res) => this.answerHub(req, res));
  private readonly cdn = http.createServer((req, res) => this.answerCdn(req, res));
  private readonly byHash = new Map<string, RepoFile>();
  url = '';
  private cdnUrl = '';

  constructor(
    private readonly repo: string,
    readonly commit: string,
    private readonly files: readonly RepoFile[],
    /** The token the Hub requires (a gated repository); the CDN's signed URLs need none. */
    private readonly token: string,
  ) {
    for (const file of files) this.byHash.set(sha256(file.content), file);
  }

  async start(): Promise<void> {
    this.url = await listen(this.hub);
    this.cdnUrl = await listen(this.cdn);
  }

  async stop(): Promise<void> {
    for (const server of [this.hub, this.cdn]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  private note(server: SeenRequest['server'], req: http.IncomingMessage): void {
    this.requests.push({ server, url: req.url ?? '', authorization: req.headers.authorization, range: req.headers.range });
  }

  private answerHub(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.note('hub', req);
    const url = new URL(req.url ?? '/', this.url);
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      res
        .writeHead(401, { 'x-error-code': 'GatedRepo', 'x-error-message': 'Access to model is restricted. You must have access to it and be authenticated.' })
        .end();
      return;
    }
    const api = `/api/models/${this.repo}`;
    const revision = url.pathname.startsWith(`${api}/revision/`) ? decodeURIComponent(url.pathname.slice(`${api}/revision/`.length)) : null;
    if (revision !== null) {
      if (revision !== 'main' && revision !== this.commit) return this.notFound(res, 'RevisionNotFound');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: this.repo, sha: this.commit, siblings: this.files.map((f) => ({ rfilename: f.path })) }));
      return;
    }
    if (url.pathname === `${api}/tree/${this.commit}`) return this.tree(url, res);
    const resolve = `/${this.repo}/resolve/${this.commit}/`;
    const file = url.pathname.startsWith(resolve) ? this.files.find((f) => f.path === decodeURIComponent(url.pathname.slice(resolve.length))) : undefined;
    if (!file) return this.notFound(res, 'EntryNotFound');
    if (file.lfs) {
      const hash = sha256(file.content);
      res.writeHead(302, {
        location: `${this.cdnUrl}/repos/${hash}?signature=local`,
        'x-linked-etag': `"${hash}"`,
        'x-linked-size': String(file.content.length),
        etag: `"${gitBlobId(lfsPointer(file.content))}"`,
        'x-repo-commit': this.commit,
      });
      res.end();
      return;
    }
    this.sendBytes(req, res, file, { etag: `"${gitBlobId(file.content)}"`, 'x-repo-commit': this.commit });
  }

  /** One file per page, so that the client must follow `Link: <...>; rel="next"`. */
  private tree(url: URL, res: http.ServerResponse): void {
    const cursor = Number(url.searchParams.get('cursor') ?? 0);
    const file = this.files[cursor];
    const entry = file && {
      type: 'file',
      path: file.path,
      size: file.content.length,
      oid: gitBlobId(file.lfs ? lfsPointer(file.content) : file.content),
      ...(file.lfs && { lfs: { oid: sha256(file.content), size: file.content.length, pointerSize: lfsPointer(file.content).length } }),
    };
    const next = cursor + 1 < this.files.length ? { link: `<${this.url}${url.pathname}?recursive=true&cursor=${cursor + 1}>; rel="next"` } : {};
    res.writeHead(200, { 'content-type': 'application/json', ...next });
    res.end(JSON.stringify(entry ? [entry] : []));
  }

  private answerCdn(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.note('cdn', req);
    const file = this.byHash.get(new URL(req.url ?? '/', this.cdnUrl).pathname.replace('/repos/', ''));
    if (!file) return this.notFound(res, 'NoSuchKey');
    this.sendBytes(req, res, file, { etag: `"${sha256(file.content)}"` });
  }

  /** The file from the Range's start (206) or whole (200), with the next fault queued for it. */
  private sendBytes(req: http.IncomingMessage, res: http.ServerResponse, file: RepoFile, headers: Record<string, string>): void {
    const fault = this.faults.get(file.path)?.shift();
    let content = file.content;
    if (fault && 'corrupt' in fault) {
      content = Buffer.from(content);
      content[content.length >> 1] ^= 0xff;
    }
    const start = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
    if (start >= content.length) {
      res.writeHead(416, { 'content-range': `bytes */${content.length}` }).end();
      return;
    }
    const body = content.subarray(start);
    const range = req.headers.range ? { 'content-range': `bytes ${start}-${content.length - 1}/${content.length}` } : {};
    res.writeHead(req.headers.range ? 206 : 200, { ...headers, ...range, 'accept-ranges': 'bytes', 'content-length': String(body.length) });
    if (fault && 'breakAfter' in fault) {
      // The promised length never arrives: the client sees the connection close mid-file.
      res.write(body.subarray(0, fault.breakAfter), () => res.socket?.destroy());
      return;
    }
    res.end(body);
  }

  private notFound(res: http.ServerResponse, code: string): void {
    res.writeHead(404, { 'x-error-code': code, 'x-error-message': `${code} (local Hub)` }).end();
  }
}
