/**
 * Prometheus' text format (version 0.0.4), read back as a test sees it: every sample by its
 * series, `name{label="value",…}` with the labels sorted by name.
 */
export type Samples = ReadonlyMap<string, number>;

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheus(text: string): Samples {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample: ${line}`);
    const labels = Object.fromEntries(
      [...(match[2] ?? '').matchAll(LABEL)].map((m) => [
        m[1],
        m[2].replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1'),
      ]),
    );
    samples.set(series(match[1], labels), Number(match[3]));
  }
  return samples;
}

/** The key of one series in `parsePrometheus`' map. */
export function series(name: string, labels: Record<string, string> = {}): string {
  const pairs = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`);
  return pairs.length ? `${name}{${pairs.join(',')}}` : name;
}

/** A series' value (0 when absent: a counter not incremented yet). */
export function sample(
  samples: Samples,
  name: string,
  labels: Record<string, string> = {},
): number {
  return samples.get(series(name, labels)) ?? 0;
}
