import fs from 'node:fs/promises';

/**
 * What an uploaded part holds, told by its bytes (never by its file name or content type, which
 * clients get wrong): Parquet starts and ends with `PAR1`; an Arrow IPC file starts with
 * `ARROW1`; an Arrow IPC stream starts with the 0xFFFFFFFF continuation marker.
 */
export type FileFormat = 'parquet' | 'arrow-file' | 'arrow-stream';

export type Detected = { format: FileFormat } | { format: null; reason: string };

const PARQUET = Buffer.from('PAR1');
const ARROW_FILE = Buffer.from('ARROW1');
const CONTINUATION = Buffer.from([0xff, 0xff, 0xff, 0xff]);

export async function detectFormat(file: string): Promise<Detected> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size === 0) return { format: null, reason: 'it is empty' };
    const head = Buffer.alloc(Math.min(64, size));
    await handle.read(head, 0, head.length, 0);
    if (head.subarray(0, 6).equals(ARROW_FILE)) return { format: 'arrow-file' };
    if (head.subarray(0, 4).equals(CONTINUATION)) return { format: 'arrow-stream' };
    if (head.subarray(0, 4).equals(PARQUET)) {
      const tail = Buffer.alloc(4);
      if (size >= 12) await handle.read(tail, 0, 4, size - 4);
      return tail.equals(PARQUET)
        ? { format: 'parquet' }
        : { format: null, reason: 'it starts like Parquet but has no Parquet footer (was the upload cut short?)' };
    }
    return { format: null, reason: guess(head) };
  } finally {
    await handle.close();
  }
}

function guess(head: Buffer): string {
  if (head[0] === 0x1f && head[1] === 0x8b) return 'it is gzip-compressed';
  if (head.subarray(0, 4).toString('latin1') === 'FEA1') return 'it is a Feather v1 file (write Arrow IPC, Feather v2, instead)';
  const text = head.toString('utf8');
  if (/^[\s]*[{[]/.test(text)) return 'it looks like JSON';
  if (/^[\x20-\x7e\t\r\n]+$/.test(text)) return 'it looks like text (CSV is not accepted)';
  return `it starts with the bytes ${head.subarray(0, 8).toString('hex')}`;
}
