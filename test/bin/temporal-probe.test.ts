/**
 * The start-up probe of a secured Temporal against servers that fail the TLS handshake itself, as
 * Temporal's own server does with mutual TLS (nginx, in test/jobs/temporal-tls.test.ts, closes
 * the connection after it instead): each failure names the setting at fault.
 */
import http2 from 'node:http2';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig, type Environment } from '../../config.ts';
import { probeTemporal } from '../../bin/temporal-connection.ts';
import { tempDataDir } from '../api/helpers.ts';
import { makeCertificates, SERVER_NAME, type Certificates } from '../jobs/tls-front.ts';

let certs: Certificates;
let mutual: http2.Http2SecureServer;
let plaintext: http2.Http2Server;
const address = (server: http2.Http2SecureServer | http2.Http2Server) => `127.0.0.1:${(server.address() as AddressInfo).port}`;
const listen = (server: http2.Http2SecureServer | http2.Http2Server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

beforeAll(async () => {
  certs = await makeCertificates(path.join(tempDataDir(), 'certs'));
  const file = (name: string) => fs.readFileSync(path.join(certs.dir, name));
  // Refuses a missing or foreign client certificate inside the handshake.
  mutual = http2.createSecureServer({
    cert: file('server.pem'),
    key: file('server.key'),
    ca: file('client-ca.pem'),
    requestCert: true,
    rejectUnauthorized: true,
  });
  plaintext = http2.createServer();
  await Promise.all([listen(mutual), listen(plaintext)]);
}, 60_000);
afterAll(() => {
  mutual?.close();
  plaintext?.close();
});

const probe = (env: Environment) => probeTemporal(loadConfig(env).temporal, 5_000);
const secured = (): Environment => ({
  TEMPORAL_ADDRESS: address(mutual),
  TEMPORAL_TLS_CA: certs.serverCa,
  TEMPORAL_TLS_CERT: certs.clientCert,
  TEMPORAL_TLS_KEY: certs.clientKey,
  TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
});

test('a server that accepts the client certificate answers the probe', async () => {
  await expect(probe(secured())).resolves.toBeUndefined();
});

test('a handshake refused for a missing client certificate says to set TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY', async () => {
  const { TEMPORAL_TLS_CERT: _c, TEMPORAL_TLS_KEY: _k, ...noCertificate } = secured();
  await expect(probe(noCertificate)).rejects.toThrow(
    /ended the TLS handshake \(ERR_SSL_\w+_ALERT_\w+\): it requires a client certificate: set TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY/,
  );
});

test('a handshake refused for a foreign client certificate names TEMPORAL_TLS_CERT', async () => {
  const foreign = { ...secured(), TEMPORAL_TLS_CERT: certs.rogueClientCert, TEMPORAL_TLS_KEY: certs.rogueClientKey };
  // Node's server checks the chain after the handshake and closes the connection without an alert.
  await expect(probe(foreign)).rejects.toThrow(/it refused the client certificate TEMPORAL_TLS_CERT=\S+rogue-client\.pem/);
});

test('a wrong server name names TEMPORAL_TLS_SERVER_NAME and the names the certificate carries', async () => {
  await expect(probe({ ...secured(), TEMPORAL_TLS_SERVER_NAME: 'other.test' })).rejects.toThrow(
    /TEMPORAL_TLS_SERVER_NAME=other\.test is not a name on the server's certificate \(it carries DNS:temporal\.test\)/,
  );
});

test('TLS to a plaintext server says it does not answer TLS', async () => {
  await expect(probe({ ...secured(), TEMPORAL_ADDRESS: address(plaintext) })).rejects.toThrow(/does not answer TLS \(ERR_SSL_\w+\)/);
});

test('a plaintext server answers a plaintext probe', async () => {
  await expect(probe({ TEMPORAL_ADDRESS: address(plaintext) })).resolves.toBeUndefined();
});
