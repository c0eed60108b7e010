// Pure formatting helpers: numbers from the API as people read them. No DOM and no API calls, so
// Node's test runner checks them as they are (web/test/format.test.mjs).

// Cents, as people read money ($19.92, $1,250.00); the exact figure is in exactMoney. An amount
// under a cent (storage per hour, a few seconds of GPU) keeps two significant digits ($0.00038)
// rather than reading as nothing.
export function money(micros) {
  if (micros === undefined || micros === null) return '-';
  const dollars = Math.abs(micros) / 1e6;
  const text =
    dollars >= 0.01 || dollars === 0
      ? dollars.toLocaleString('en-US', {minimumFractionDigits: 2, maximumFractionDigits: 2})
      : String(Number(dollars.toPrecision(2)));
  return (micros < 0 ? '-$' : '$') + text;
}

// Every micro-dollar (billing is by the second): for a tooltip beside money()'s rounded figure.
export function exactMoney(micros) {
  return (micros < 0 ? '-$' : '$') + (Math.abs(micros) / 1e6).toFixed(6);
}

// A pod's GPUs: "2", or its share of one ("0.5"; servers before shares send no gpu_milli).
export function podGpus(pod) {
  return pod.gpu_milli && pod.gpu_milli < 1000
    ? String(pod.gpu_milli / 1000)
    : String(pod.gpu_count);
}

// What a pod's GPUs cost an hour at `perGpuHour` (micro-dollars for one whole GPU), as the server
// bills it: a share is its part of the price, rounded down to the micro-dollar (billing::GpuRate).
// A pod's own gpu_price_per_hour_micros is fixed only when a run starts (0 while it waits).
export function podGpuRate(pod, perGpuHour) {
  return Math.floor((perGpuHour * pod.gpu_count * (pod.gpu_milli || 1000)) / 1000);
}

// "4m10s", "1h01m", "5d03h": the two largest units.
export function duration(seconds) {
  if (!seconds || seconds < 0) return '0s';
  const d = Math.floor(seconds / 86400),
    hh = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60),
    s = Math.floor(seconds % 60);
  if (d) return `${d}d${String(hh).padStart(2, '0')}h`;
  if (hh) return `${hh}h${String(m).padStart(2, '0')}m`;
  if (m) return `${m}m${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

// A long time as people say it: "5d03h" is fine, "2996d02h" is not ("about 8.2 years").
export function roughDuration(seconds) {
  const days = seconds / 86400;
  if (days < 7) return duration(seconds);
  if (days < 90) return `about ${Math.round(days)} days`;
  if (days < 730) return `about ${Math.round(days / 30.44)} months`;
  return `about ${(days / 365.25).toFixed(1)} years`;
}

// GPU time in a usage table: "4m10s" for a short run (not "0.00" hours), hours beyond one.
export function gpuTime(seconds) {
  return seconds < 3600 ? duration(seconds) : `${(seconds / 3600).toFixed(1)} h`;
}

// A size in bytes: GiB with one decimal, else whole MiB, else whole KiB, else bytes (a snapshot of
// a nearly empty volume is "2 KiB", not "0 MiB"); "-" for a size not known yet.
export function bytes(n) {
  if (n === undefined || n === null) return '-';
  if (n >= 2 ** 30) return (n / 2 ** 30).toFixed(1) + ' GiB';
  if (n >= 2 ** 20) return Math.floor(n / 2 ** 20) + ' MiB';
  if (n >= 2 ** 10) return Math.floor(n / 2 ** 10) + ' KiB';
  return `${n} B`;
}

// A time from the API (RFC 3339, UTC) to the second, as the tables show it: "2025-01-31 14:05:09".
export function dateTime(text) {
  return text.replace('T', ' ').slice(0, 19);
}

// The advisor's times: minutes under an hour (at least 1), hours under two days, then days.
export function hours(seconds) {
  if (seconds === null || seconds === undefined) return '-';
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))} min`;
  return seconds < 172800
    ? `${(seconds / 3600).toFixed(1)} h`
    : `${(seconds / 86400).toFixed(1)} days`;
}

// The figure the advisor ranks by: tokens/s for language models, images or samples/s otherwise.
export function rate(estimate) {
  const t = estimate.throughput || {};
  const [value, unit] = t.decode_tokens_per_s
    ? [t.decode_tokens_per_s, 'tokens/s']
    : t.train_tokens_per_s
      ? [t.train_tokens_per_s, 'tokens/s']
      : t.images_per_s
        ? [t.images_per_s, 'images/s']
        : t.samples_per_s
          ? [t.samples_per_s, 'samples/s']
          : [null, ''];
  return value === null
    ? '-'
    : `${value >= 100 ? Math.round(value) : value.toPrecision(3)} ${unit}`;
}

// "RTX 4090" for one GPU, "2x RTX 4090" for more.
export const gpusText = (gpu, count) => `${count > 1 ? count + 'x ' : ''}${gpu}`;
