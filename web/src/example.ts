/** A small long-format CSV to try the playground with: two daily series with a weekly cycle. */
export function exampleCsv(): string {
  const lines = ['unique_id,ds,y'];
  for (const [name, level, swing] of [
    ['store_a', 120, 25],
    ['store_b', 60, 12],
  ] as const) {
    for (let t = 0; t < 84; t++) {
      const day = new Date(Date.UTC(2024, 0, 1) + t * 86_400_000).toISOString().slice(0, 10);
      const weekly = swing * Math.sin((2 * Math.PI * t) / 7);
      const wiggle = ((t * 7919) % 11) - 5;
      lines.push(`${name},${day},${(level + 0.3 * t + weekly + wiggle).toFixed(1)}`);
    }
  }
  return lines.join('\n');
}
