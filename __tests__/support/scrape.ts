/**
 * GET /metrics text read by a real parser of the exposition format (parse-prometheus-text-format),
 * so that tests assert on families, labels and values rather than on the layout of lines.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export interface Series {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Scrape {
  /** Metric family names, in the order of the text. */
  readonly names: readonly string[];
  /** The family's type (`counter`, `gauge`, `histogram`, ...); undefined when absent. */
  type(name: string): string | undefined;
  /** Every series of a counter or gauge family. */
  series(name: string): Series[];
  /** The one series whose labels include `labels`; undefined when none (throws when several match). */
  value(name: string, labels?: Readonly<Record<string, string>>): number | undefined;
  /** A histogram's count and sum for the series whose labels include `labels`. */
  histogram(name: string, labels?: Readonly<Record<string, string>>): { count: number; sum: number } | undefined;
}

export function parseScrape(text: string): Scrape {
  const families = parsePrometheusTextFormat(text);
  // The parser folds a labelled histogram into one sample (it keeps count and sum only without
  // labels); read without its TYPE line, each of its _bucket, _sum and _count series is a family
  // of its own, which the parser reads correctly, labels included.
  const untyped = parsePrometheusTextFormat(text.split('\n').filter((line) => !/^# TYPE \S+ histogram$/.test(line)).join('\n'));
  const family = (name: string) => families.find((f) => f.name === name);
  const select = (name: string, labels: Readonly<Record<string, string>>, from = families) => {
    // Without a TYPE line, one histogram's series come as several families of the same name.
    const found = from.filter((f) => f.name === name).flatMap((f) => f.metrics).filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
    if (found.length > 1) throw new Error(`${found.length} series of ${name} match ${JSON.stringify(labels)}`);
    return found[0];
  };
  return {
    names: families.map((f) => f.name),
    type: (name) => family(name)?.type.toLowerCase(),
    series: (name) => (family(name)?.metrics ?? []).map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) })),
    value: (name, labels = {}) => {
      const sample = select(name, labels);
      return sample === undefined ? undefined : Number(sample.value);
    },
    histogram: (name, labels = {}) => {
      if (family(name)?.type !== 'HISTOGRAM') throw new Error(`${name} is not a histogram`);
      const count = select(`${name}_count`, labels, untyped);
      const sum = select(`${name}_sum`, labels, untyped);
      return count === undefined || sum === undefined ? undefined : { count: Number(count.value), sum: Number(sum.value) };
    },
  };
}
