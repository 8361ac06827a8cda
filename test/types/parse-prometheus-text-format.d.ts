// Types of parse-prometheus-text-format (the package ships none): metric families as prom2json gives them.

declare module "parse-prometheus-text-format" {
  /** One series; a histogram's has buckets (upper bound to cumulative count), count and sum instead of value. */
  export interface Sample {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  /** One metric family: its name, help, type (COUNTER, GAUGE, HISTOGRAM, SUMMARY, UNTYPED) and series. */
  export interface Family {
    name: string;
    help: string;
    type: string;
    metrics: Sample[];
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}
