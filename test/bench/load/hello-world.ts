/**
 * The reference points of the load benchmark's throughput phase, in a plain Fastify server
 * (default options: no logger, no hooks) started as a child process on 127.0.0.1:<port>, like
 * the service:
 *
 * - `GET /`: Fastify's "hello world", a small JSON document: the target's reference;
 * - `POST /forecast`: the same request body as the service's small forecast, parsed, answered
 *   with the service's own answer (read from <answer file> at start, serialized per request):
 *   what the HTTP and JSON work of that request costs in Fastify with nothing else, the ceiling
 *   of the service's throughput on this machine.
 */
import fs from 'node:fs';
import Fastify from 'fastify';

const [port, answerFile] = process.argv.slice(2);
const answer: unknown = JSON.parse(fs.readFileSync(answerFile, 'utf8'));
const app = Fastify();
app.get('/', async () => ({ hello: 'world' }));
app.post('/forecast', async () => answer);
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
