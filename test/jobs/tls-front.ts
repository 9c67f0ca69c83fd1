import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../store/minio.ts';

/**
 * A secured Temporal for tests: nginx (Debian's, with its stream module; scripts/ensure-nginx.sh)
 * terminates TLS in front of a plaintext dev server. It either closes every connection whose
 * client certificate its CA did not sign, as a cluster with mutual TLS does, or refuses every call
 * without the right API key, as Temporal Cloud does.
 * The certificates are made with openssl for the test: a server CA, a server certificate for
 * `temporal.test` only (so reaching 127.0.0.1 needs TEMPORAL_TLS_SERVER_NAME), a client CA and a
 * client certificate, and a rogue CA with a client certificate of its own.
 */

const run = promisify(execFile);

export const NGINX = process.env.NGINX_BIN || '/usr/sbin/nginx';
export const STREAM_MODULE = '/usr/lib/nginx/modules/ngx_stream_module.so';
export const SERVER_NAME = 'temporal.test';

/** Why nginx cannot front Temporal here, or null when it can. */
export function nginxMissing(): string | null {
  if (!fs.existsSync(NGINX)) return `nginx is not installed at ${NGINX} (scripts/ensure-nginx.sh installs it)`;
  if (!fs.existsSync(STREAM_MODULE)) return `nginx's stream module is not installed at ${STREAM_MODULE} (Debian's libnginx-mod-stream)`;
  return null;
}

export interface Certificates {
  dir: string;
  serverCa: string;
  clientCert: string;
  clientKey: string;
  /** A CA that signed nothing of the server's. */
  rogueCa: string;
  /** A client certificate that the server's trusted client CA did not sign. */
  rogueClientCert: string;
  rogueClientKey: string;
}

async function authority(dir: string, name: string): Promise<void> {
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    path.join(dir, `${name}.key`),
    '-out',
    path.join(dir, `${name}.pem`),
  ]);
}

async function issued(dir: string, ca: string, name: string, extensions: string): Promise<void> {
  const file = (suffix: string) => path.join(dir, `${name}.${suffix}`);
  await run('openssl', [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    file('key'),
    '-out',
    file('csr'),
  ]);
  fs.writeFileSync(file('ext'), extensions);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    file('csr'),
    '-CA',
    path.join(dir, `${ca}.pem`),
    '-CAkey',
    path.join(dir, `${ca}.key`),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    file('ext'),
    '-out',
    file('pem'),
  ]);
}

export async function makeCertificates(dir: string): Promise<Certificates> {
  fs.mkdirSync(dir, { recursive: true });
  for (const ca of ['server-ca', 'client-ca', 'rogue-ca']) await authority(dir, ca);
  await issued(dir, 'server-ca', 'server', `subjectAltName=DNS:${SERVER_NAME}\nextendedKeyUsage=serverAuth\n`);
  await issued(dir, 'client-ca', 'client', 'extendedKeyUsage=clientAuth\n');
  await issued(dir, 'rogue-ca', 'rogue-client', 'extendedKeyUsage=clientAuth\n');
  const at = (name: string) => path.join(dir, name);
  return {
    dir,
    serverCa: at('server-ca.pem'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    rogueCa: at('rogue-ca.pem'),
    rogueClientCert: at('rogue-client.pem'),
    rogueClientKey: at('rogue-client.key'),
  };
}

export interface TlsFront {
  /** Where clients reach the secured Temporal: `127.0.0.1:port`. */
  address: string;
  stop(): Promise<void>;
}

/**
 * The nginx configuration of a front. `mutual`: TLS with client certificates, each connection
 * passed on whole (a self-hosted cluster with mutual TLS). `apiKey`: TLS with the server's
 * certificate only, and each gRPC call without `Authorization: Bearer <apiKey>` answered 401
 * (as Temporal Cloud refuses a call without its API key).
 */
function frontConfig(certs: Certificates, port: number, upstream: string, access: { mutual: true } | { apiKey: string }): string {
  const at = (name: string) => path.join(certs.dir, name);
  const head = `load_module ${STREAM_MODULE};
daemon off;
user root;
worker_processes 1;
pid ${at(`nginx-${port}.pid`)};
error_log ${at('nginx-error.log')} info;
events { worker_connections 256; }
`;
  const serverTls = `ssl_certificate ${at('server.pem')};
    ssl_certificate_key ${at('server.key')};`;
  // Long timeouts: a worker's task polls wait about a minute for work on an idle connection.
  if ('mutual' in access) {
    return `${head}stream {
  server {
    listen 127.0.0.1:${port} ssl;
    ${serverTls}
    ssl_client_certificate ${at('client-ca.pem')};
    ssl_verify_client on;
    ssl_alpn h2;
    proxy_pass ${upstream};
    proxy_timeout 1h;
  }
}
`;
  }
  return `${head}http {
  access_log off;
  server {
    listen 127.0.0.1:${port} ssl http2;
    ${serverTls}
    client_body_timeout 1h;
    grpc_read_timeout 1h;
    grpc_send_timeout 1h;
    location / {
      if ($http_authorization != "Bearer ${access.apiKey}") { return 401; }
      grpc_pass grpc://${upstream};
    }
  }
}
`;
}

/** nginx on a free loopback port in front of the plaintext Temporal at `upstream`. */
export async function startTlsFront(
  certs: Certificates,
  upstream: string,
  access: { mutual: true } | { apiKey: string } = { mutual: true },
): Promise<TlsFront> {
  const port = await freePort();
  const conf = path.join(certs.dir, `nginx-${port}.conf`);
  fs.writeFileSync(conf, frontConfig(certs, port, upstream, access));
  const prefix = path.join(certs.dir, `nginx-${port}`);
  fs.mkdirSync(prefix, { recursive: true });
  const child: ChildProcess = spawn(NGINX, ['-c', conf, '-p', prefix, '-e', path.join(certs.dir, 'nginx-error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 15_000;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not start on port ${port}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    address: `127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGQUIT');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      child.kill('SIGKILL');
    },
  };
}
