import { expect, test } from 'vitest';
import { JobDocuments } from '../../activities/job-documents.ts';

test('a document is read once per key; a failed read is retried; the oldest key goes first', async () => {
  const documents = new JobDocuments(2);
  let reads = 0;
  const read = (value: string) => async () => (reads++, value);
  expect(await documents.get('meta/a', read('a'))).toBe('a');
  expect(await documents.get('meta/a', read('other'))).toBe('a');
  expect(reads).toBe(1);

  // Not written yet (a plan before planning ends): the failure is not kept.
  await expect(documents.get('plan/a', () => Promise.reject(new Error('not found')))).rejects.toThrow('not found');
  expect(await documents.get('plan/a', read('plan'))).toBe('plan');

  // Two entries at most: a third drops the oldest, which is then read again.
  await documents.get('meta/b', read('b'));
  expect(await documents.get('meta/a', read('a again'))).toBe('a again');
});
