// The parser has no types of its own: it returns one entry per metric family.
declare module 'parse-prometheus-text-format' {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
