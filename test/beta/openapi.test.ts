import { Validator } from '@seriousme/openapi-schema-validator';
import { expect, test } from 'vitest';
import { buildOpenApiDocument } from '../../api/openapi.ts';

test('POST /v1-beta/forecast is documented from the validating schemas, and the document stays valid', async () => {
  const doc = buildOpenApiDocument('t0-beta') as unknown as Record<string, any>;
  const result = await new Validator().validate(doc);
  expect(result.errors ?? []).toEqual([]);
  const post = doc.paths['/v1-beta/forecast'].post;
  expect(post.parameters.find((p: { name: string }) => p.name === 'model').required).toBe(true);
  const multipart = post.requestBody.content['multipart/form-data'];
  expect(multipart.schema.properties.query.$ref).toBe('#/components/schemas/BetaQuery');
  expect(multipart.encoding.query.contentType).toBe('application/json');
  expect(post.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/BetaResponse');
  expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['400', '401', '413', '415', '422', '429', '500']));
  const query = doc.components.schemas.BetaQuery;
  expect(query.additionalProperties).toBe(false);
  expect(query.required).toEqual(['input', 'prediction_length']);
  expect(doc.components.schemas.BetaDuration.pattern).toBe('^[1-9][0-9]{0,5}(s|min|h|d|w|mo|q|y)$');
});
