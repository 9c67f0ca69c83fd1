/**
 * The part of autocannon 8's programmatic API that the load benchmark uses (the package ships no
 * types, and there is no @types package for version 8).
 */
declare module 'autocannon' {
  export interface RequestContext {
    [key: string]: unknown;
  }

  export interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  export interface Request extends RequestParams {
    /** Changes the request before it is sent; a falsy return restarts the connection's sequence. */
    setupRequest?: (request: RequestParams, context: RequestContext) => RequestParams | null | undefined;
    onResponse?: (status: number, body: string, context: RequestContext, headers: Record<string, string>) => void;
  }

  export interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: Request[];
    /** Requests per second from each connection (none: back to back). */
    connectionRate?: number;
    ignoreCoordinatedOmission?: boolean;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
    /** Answers whose body differs from it are counted in `mismatches`. */
    expectBody?: string;
  }

  /** Percentiles in milliseconds (latency) or per second (requests). */
  export interface Histogram {
    average: number;
    mean: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    total: number;
  }

  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram & { totalCount: number };
    requests: Histogram & { sent: number };
  }

  export interface Instance extends PromiseLike<Result> {
    stop(): void;
  }

  function autocannon(options: Options): Instance;
  export default autocannon;
}
