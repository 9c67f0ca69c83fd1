import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { KEY, startContractServer, type ContractServer } from './contract-server.ts';

/**
 * A client generated from GET /openapi by a standard generator (openapi-typescript, with
 * openapi-fetch as its runtime) compiles, makes a forecast, submits and polls a job, and reads a
 * refusal; then what the server answered is type-checked against the generated response types,
 * so a field the document requires and the server leaves out (or types otherwise) fails here.
 */

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

let server: ContractServer;
let dir: string;
beforeAll(async () => {
  server = await startContractServer('contract-generated-client');
  // Inside the repository (in its ignored .tmp/), so that the client resolves openapi-fetch and tsx from node_modules.
  fs.mkdirSync(path.join(root, '.tmp'), { recursive: true });
  dir = fs.mkdtempSync(path.join(root, '.tmp', 'generated-client-'));
}, 120_000);
afterAll(async () => {
  await server?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The compiler's complaints about `files`, as `file:line: message` lines (none when they type-check). */
function typeErrors(files: string[]): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
    types: ['node'],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
}

function run(file: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** What a user writes against the generated types: only the document tells it what to send and what comes back. */
const CLIENT = `import { randomUUID } from 'node:crypto';
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.ts';

const client = createClient<paths>({ baseUrl: process.env.BASE_URL!, headers: { Authorization: \`Bearer \${process.env.API_KEY}\` } });

const target = [112, 118, 132, 129, 121, 135, 148, 148, 136, 119, 104, 118, 115, 126, 141, 135];
const request: components['schemas']['ForecastRequest'] = {
  series: [{ target, index: target.map((_, i) => \`2024-01-\${String(i + 1).padStart(2, '0')}\`), fcds: [12, 16] }],
  horizon: 3,
  freq: 'D',
  quantiles: [0.1, 0.9],
};

const forecast = await client.POST('/forecast', { params: { query: { model: 'aets' } }, body: request });
if (!forecast.data) throw new Error(\`POST /forecast answered \${forecast.response.status}\`);
const firstMean: number[] = forecast.data.series![0][0].prediction.mean;

const submitted = await client.POST('/forecast-jobs', {
  params: { query: { model: 'aets' }, header: { 'Idempotency-Key': randomUUID() } },
  body: request,
});
if (!submitted.data) throw new Error(\`POST /forecast-jobs answered \${submitted.response.status}\`);
const jobId: string = submitted.data.job_id;

let job = await client.GET('/forecast-jobs/{job_id}', { params: { path: { job_id: jobId } } });
for (let tries = 0; job.data?.status === 'in_progress' && tries < 300; tries++) {
  await new Promise((resolve) => setTimeout(resolve, 200));
  job = await client.GET('/forecast-jobs/{job_id}', { params: { path: { job_id: jobId } } });
}
if (!job.data) throw new Error(\`GET /forecast-jobs/{job_id} answered \${job.response.status}\`);

const refused = await client.POST('/forecast', { params: { query: { model: 'aets' } }, body: { ...request, horizon: 0 } });

console.log(JSON.stringify({
  forecast: forecast.data,
  firstMean,
  submitted: submitted.data,
  job: job.data,
  refusal: { status: refused.response.status, contentType: refused.response.headers.get('content-type'), body: refused.error },
}));
`;

test('a client generated from /openapi compiles, forecasts, runs a job, and every answer has the generated types', { timeout: 180_000 }, async () => {
  const document = await (await fetch(`${server.url}/openapi`)).json();
  // openapi-typescript reads a property with a default as always present, which is true of
  // responses only: a request may leave it out (the document does not list it as required).
  const schema = COMMENT_HEADER + astToString(await openapiTS(document, { silent: true, defaultNonNullable: false }));
  fs.writeFileSync(path.join(dir, 'schema.ts'), schema);
  fs.writeFileSync(path.join(dir, 'client.ts'), CLIENT);
  expect(typeErrors([path.join(dir, 'client.ts')])).toEqual([]);

  const ran = await run('client.ts', { BASE_URL: server.url, API_KEY: KEY });
  expect(ran.code, ran.stderr).toBe(0);
  const answers = JSON.parse(ran.stdout);

  // What the server answered, as values of the generated response types.
  const responseType = (route: string, method: string, status: number, media: string) =>
    `paths['${route}']['${method}']['responses'][${status}]['content']['${media}']`;
  const typed = [
    `import type { paths } from './schema.ts';`,
    `export const forecast: ${responseType('/forecast', 'post', 200, 'application/json')} = ${JSON.stringify(answers.forecast)};`,
    `export const submitted: ${responseType('/forecast-jobs', 'post', 200, 'application/json')} = ${JSON.stringify(answers.submitted)};`,
    `export const job: ${responseType('/forecast-jobs/{job_id}', 'get', 200, 'application/json')} = ${JSON.stringify(answers.job)};`,
    `export const refusal: ${responseType('/forecast', 'post', 422, 'application/problem+json')} = ${JSON.stringify(answers.refusal.body)};`,
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'answers.ts'), typed);
  expect(typeErrors([path.join(dir, 'answers.ts')])).toEqual([]);

  // And they are the answers the document promises.
  expect(answers.forecast.status).toBe('completed');
  expect(answers.forecast.series[0]).toHaveLength(2);
  expect(answers.firstMean).toHaveLength(3);
  expect(Object.keys(answers.forecast.series[0][0].prediction).sort()).toEqual(['0.1', '0.9', 'mean']);
  expect(answers.submitted).toEqual({ job_id: expect.any(String), call_id: answers.submitted.job_id, status: 'in_progress' });
  expect(answers.job).toMatchObject({ job_id: answers.submitted.job_id, status: 'completed', series: answers.forecast.series });
  expect(answers.refusal.status).toBe(422);
  expect(answers.refusal.contentType).toMatch(/^application\/problem\+json/);
  expect(answers.refusal.body.errors).toEqual([{ path: 'body.horizon', message: expect.any(String) }]);
});
