/**
 * How every process of the service reaches Temporal: the options its client and its workers
 * connect with, and a check made before either connects. The check opens one HTTP/2 connection
 * with the same TLS settings and waits for the server's first frame. Its failures are precise
 * (a TLS error code, a refused port, a connection closed after the handshake), where the SDKs'
 * are not, so start-up can name the setting at fault (docs/deployment.md, "A secured Temporal").
 */
import http2 from 'node:http2';
import net from 'node:net';
import type { TemporalConfig, TemporalTls } from '../config.ts';

/** What both Temporal SDK connections (the client's and the worker's) take. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: { serverRootCACertificate?: Buffer; clientCertPair?: { crt: Buffer; key: Buffer }; serverNameOverride?: string } | false;
  apiKey?: string;
}

export function connectionOptions(temporal: TemporalConfig): TemporalConnectionOptions {
  const { tls, apiKey } = temporal;
  return {
    address: temporal.target,
    // false, not undefined: with an API key the SDKs would otherwise switch TLS on by themselves.
    tls: tls
      ? {
          ...(tls.serverCa ? { serverRootCACertificate: Buffer.from(tls.serverCa) } : {}),
          ...(tls.clientCertificate ? { clientCertPair: { crt: Buffer.from(tls.clientCertificate.cert), key: Buffer.from(tls.clientCertificate.key) } } : {}),
          ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
        }
      : false,
    ...(apiKey ? { apiKey } : {}),
  };
}

const PROBE_TIMEOUT_MS = 10_000;

/** Host and port of `host:port` or `[ipv6]:port`; Temporal's default port when none is given. */
function hostAndPort(address: string): { host: string; port: number } {
  const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(address) ?? /^([^:]+)(?::(\d+))?$/.exec(address);
  if (!match) throw new Error(`TEMPORAL_ADDRESS must be host:port; got '${address}'`);
  return { host: match[1], port: match[2] ? Number(match[2]) : 7233 };
}

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);
/** TLS alerts a server sends when it wants a client certificate, or refuses the one it got. */
const CLIENT_CERTIFICATE_REFUSED =
  /ALERT_(CERTIFICATE_REQUIRED|BAD_CERTIFICATE|UNKNOWN_CA|HANDSHAKE_FAILURE|CERTIFICATE_UNKNOWN|CERTIFICATE_EXPIRED|CERTIFICATE_REVOKED|UNSUPPORTED_CERTIFICATE|ACCESS_DENIED)/;
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);

const named = (setting: string, file: string | null) => (file ? `${setting}=${file}` : setting);

function clientCertificateAdvice(tls: TemporalTls): string {
  return tls.clientCertificate
    ? `it refused the client certificate ${named('TEMPORAL_TLS_CERT', tls.files.cert)} (is it signed by a CA the server trusts, and valid?)`
    : 'it requires a client certificate: set TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY';
}

/**
 * A failed probe as one sentence that names the setting at fault. `connected`: the connection was
 * made (with TLS, the handshake too) before it failed.
 */
export function explainProbeFailure(
  temporal: TemporalConfig,
  error: NodeJS.ErrnoException & { reason?: string; cert?: { subjectaltname?: string } },
  connected: boolean,
): string {
  const at = `Temporal at ${temporal.target}`;
  const code = error.code ?? '';
  const tls = temporal.tls;
  if (UNREACHABLE.has(code) && !connected) return `${at} cannot be reached (TEMPORAL_ADDRESS): ${error.message}`;
  if (!tls) {
    return `${at} closed the connection without answering over plaintext HTTP/2 (${error.message}): if it requires TLS, set TEMPORAL_TLS=true and TEMPORAL_TLS_CA`;
  }
  if (UNTRUSTED.has(code)) {
    return tls.serverCa
      ? `${at} presents a certificate that ${named('TEMPORAL_TLS_CA', tls.files.ca)} did not sign (${code}): set TEMPORAL_TLS_CA to the CA that signed the server's certificate`
      : `${at} presents a certificate that no CA bundled with Node.js signed (${code}): set TEMPORAL_TLS_CA to the CA that signed it`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = error.cert?.subjectaltname;
    const reason = names ? `it carries ${names}` : (error.reason ?? error.message);
    return tls.serverName
      ? `${at}: TEMPORAL_TLS_SERVER_NAME=${tls.serverName} is not a name on the server's certificate (${reason})`
      : `${at} presents a certificate for another name (${reason}): set TEMPORAL_TLS_SERVER_NAME to a name the certificate carries`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return `${at} presents a certificate that is not valid now (${code}): renew the server's certificate`;
  if (CLIENT_CERTIFICATE_REFUSED.test(code)) return `${at} ended the TLS handshake (${code}): ${clientCertificateAdvice(tls)}`;
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
    return `${at} does not answer TLS (${code}): check TEMPORAL_ADDRESS, or set TEMPORAL_TLS=false with no TEMPORAL_TLS_* settings for a plaintext cluster`;
  }
  // A server that checks client certificates after the handshake (a proxy in front of Temporal) closes the connection then.
  if (connected) return `${at} closed the connection after the TLS handshake without answering (${error.message}): ${clientCertificateAdvice(tls)}`;
  return `${at} could not be reached over TLS (${code || error.message}): check TEMPORAL_ADDRESS and the TEMPORAL_TLS_* settings`;
}

/**
 * Resolves once the server at TEMPORAL_ADDRESS has answered an HTTP/2 connection made with the
 * configured TLS settings (its SETTINGS frame comes only after it accepted the client certificate);
 * rejects with a message that names the setting at fault.
 */
export function probeTemporal(temporal: TemporalConfig, timeoutMs = PROBE_TIMEOUT_MS): Promise<void> {
  const { host, port } = hostAndPort(temporal.target);
  const tls = temporal.tls;
  const authority = `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // As the SDKs do: the name checked is the override, else the address's host (never an IP as SNI, which TLS forbids).
  const serverName = tls?.serverName ?? (net.isIP(host) ? undefined : host);
  return new Promise((resolve, reject) => {
    let connected = false;
    let settled = false;
    const session = http2.connect(authority, {
      ...(tls
        ? {
            ALPNProtocols: ['h2'],
            ...(tls.serverCa ? { ca: tls.serverCa } : {}),
            ...(tls.clientCertificate ? { cert: tls.clientCertificate.cert, key: tls.clientCertificate.key } : {}),
            ...(serverName ? { servername: serverName } : {}),
          }
        : {}),
    });
    const finish = (error?: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.destroy();
      if (error) reject(new Error(explainProbeFailure(temporal, error, connected)));
      else resolve();
    };
    const timer = setTimeout(() => {
      const waited = `no answer within ${timeoutMs / 1000} s`;
      finish(Object.assign(new Error(waited), { code: connected ? 'ECONNRESET' : 'ETIMEDOUT' }));
    }, timeoutMs);
    // With TLS, 'connect' comes once the handshake is done.
    session.once('connect', () => (connected = true));
    session.once('remoteSettings', () => finish());
    // `on`, not `once`: an error after the first must find a listener, or it would end the process.
    session.on('error', (error: NodeJS.ErrnoException) => finish(error));
    // A TLS 1.3 server refuses a client certificate after the client's handshake is done: its alert
    // reaches the socket, and the session may not pass it on.
    session.socket.on('error', (error: NodeJS.ErrnoException) => finish(error));
    session.once('close', () => finish(Object.assign(new Error('the connection was closed'), { code: 'ECONNRESET' })));
  });
}
