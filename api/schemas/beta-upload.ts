/**
 * The body both beta endpoints take (`POST /v1-beta/forecast` and its jobs): a multipart upload
 * whose `query` part is the beta request and whose other parts are data files. Documented once,
 * for both.
 */
import { z } from 'zod';
import type { ZodOpenApiRequestBodyObject } from 'zod-openapi';
import { BetaQuery } from '../../engine/beta/query-schema.ts';
import { MULTIPART_MALFORMED, overQuota, problemResponse } from './responses.ts';

export const betaBody = (): ZodOpenApiRequestBodyObject => {
  const body = z.object({ query: BetaQuery }).catchall(
    z.string().meta({
      contentMediaType: 'application/octet-stream',
      description: 'A data part (Parquet or uncompressed Arrow IPC), named by the caller and read through inline://<part name>.',
    }),
  );
  return { required: true, content: { 'multipart/form-data': { schema: body, encoding: { query: { contentType: 'application/json' } } } } };
};

export const betaUploadErrors = {
  '400': problemResponse(`${MULTIPART_MALFORMED}.`),
  '413': problemResponse(`The upload is larger than BETA_MAX_UPLOAD_BYTES (\`payload_too_large\`), ${overQuota('`upload_bytes`')}.`),
  '415': problemResponse('The body is not multipart/form-data (`unsupported_media_type`).'),
};
