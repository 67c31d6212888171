// Types of the parse-prometheus-text-format package (it ships none), as far as the tests use it.
declare module 'parse-prometheus-text-format' {
  interface Sample {
    readonly labels?: Readonly<Record<string, string>>;
    /** Counters, gauges, untyped. */
    readonly value?: string;
    /** Histograms: upper bound -> cumulative count. */
    readonly buckets?: Readonly<Record<string, string>>;
    readonly count?: string;
    readonly sum?: string;
  }
  interface Family {
    readonly name: string;
    readonly help: string;
    readonly type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    readonly metrics: readonly Sample[];
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}
