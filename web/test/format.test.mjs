// web/js/format.js, the console's pure helpers, with Node's test runner (ctest web_unit_tests).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {
  bytes,
  dateTime,
  duration,
  exactMoney,
  gpuTime,
  gpusText,
  hours,
  money,
  podGpuRate,
  podGpus,
  rate,
  roughDuration,
} from '../js/format.js';

test('money is shown in cents, an amount under a cent with two significant digits', () => {
  assert.equal(money(19_920_000), '$19.92');
  assert.equal(money(1_250_000_000), '$1,250.00');
  assert.equal(money(5_000_000), '$5.00');
  assert.equal(money(0), '$0.00');
  assert.equal(money(10_000), '$0.01');
  assert.equal(money(4_999), '$0.005'); // under a cent: not "$0.00"
  assert.equal(money(380), '$0.00038');
  assert.equal(money(1), '$0.000001');
  assert.equal(money(-2_500_000), '-$2.50');
  assert.equal(money(-380), '-$0.00038');
  assert.equal(money(undefined), '-');
  assert.equal(money(null), '-');
});

test('exact money shows every micro-dollar', () => {
  assert.equal(exactMoney(19_923_456), '$19.923456');
  assert.equal(exactMoney(1), '$0.000001');
  assert.equal(exactMoney(0), '$0.000000');
  assert.equal(exactMoney(-2_500_000), '-$2.500000');
});

test("a pod's GPUs are a count, or its share of one", () => {
  assert.equal(podGpus({gpu_count: 2}), '2');
  assert.equal(podGpus({gpu_count: 1, gpu_milli: 500}), '0.5');
  assert.equal(podGpus({gpu_count: 1, gpu_milli: 250}), '0.25');
  assert.equal(podGpus({gpu_count: 2, gpu_milli: 2000}), '2');
});

test("a pod's GPU price is its GPUs' price, a share's rounded down as billed", () => {
  assert.equal(podGpuRate({gpu_count: 2, gpu_milli: 1000}, 690_000), 1_380_000);
  assert.equal(podGpuRate({gpu_count: 1, gpu_milli: 500}, 690_000), 345_000);
  assert.equal(podGpuRate({gpu_count: 1, gpu_milli: 333}, 1_000_001), 333_000);
  assert.equal(podGpuRate({gpu_count: 3}, 500_000), 1_500_000); // servers before shares
});

test('durations show their two largest units', () => {
  assert.equal(duration(0), '0s');
  assert.equal(duration(-5), '0s');
  assert.equal(duration(undefined), '0s');
  assert.equal(duration(59), '59s');
  assert.equal(duration(250), '4m10s');
  assert.equal(duration(3600), '1h00m');
  assert.equal(duration(3_725), '1h02m');
  assert.equal(duration(86_400 * 5 + 3 * 3600 + 59), '5d03h');
});

test('a long duration is said roughly: days, months, years', () => {
  assert.equal(roughDuration(3 * 86_400 + 7200), '3d02h');
  assert.equal(roughDuration(30 * 86_400), 'about 30 days');
  assert.equal(roughDuration(200 * 86_400), 'about 7 months');
  assert.equal(roughDuration(2_996 * 86_400 + 7200), 'about 8.2 years'); // not "2996d02h"
});

test('GPU time is a duration under an hour, hours beyond', () => {
  assert.equal(gpuTime(250), '4m10s'); // not "0.07 h"
  assert.equal(gpuTime(3_599), '59m59s');
  assert.equal(gpuTime(3_600), '1.0 h');
  assert.equal(gpuTime(9_000), '2.5 h');
});

test('sizes are in GiB, MiB, KiB or bytes: a small snapshot is not "0 MiB"', () => {
  assert.equal(bytes(2_048), '2 KiB');
  assert.equal(bytes(2_047), '1 KiB');
  assert.equal(bytes(512), '512 B');
  assert.equal(bytes(0), '0 B');
  assert.equal(bytes(5 * 2 ** 20 + 1), '5 MiB');
  assert.equal(bytes(1023 * 2 ** 20), '1023 MiB');
  assert.equal(bytes(2 ** 30), '1.0 GiB');
  assert.equal(bytes(1.5 * 2 ** 30), '1.5 GiB');
  assert.equal(bytes(undefined), '-');
  assert.equal(bytes(null), '-');
});

test('times from the API are shown to the second, without the T and the zone', () => {
  assert.equal(dateTime('2025-01-31T14:05:09.123456Z'), '2025-01-31 14:05:09');
  assert.equal(dateTime('2025-01-31T14:05:09Z'), '2025-01-31 14:05:09');
});

test("the advisor's times are minutes, hours, then days", () => {
  assert.equal(hours(null), '-');
  assert.equal(hours(undefined), '-');
  assert.equal(hours(10), '1 min'); // at least a minute
  assert.equal(hours(150), '3 min');
  assert.equal(hours(5_400), '1.5 h');
  assert.equal(hours(172_799), '48.0 h');
  assert.equal(hours(172_800), '2.0 days');
});

test("the advisor's rate is tokens, images or samples per second", () => {
  assert.equal(rate({throughput: {decode_tokens_per_s: 1234.5}}), '1235 tokens/s');
  assert.equal(rate({throughput: {train_tokens_per_s: 42.123}}), '42.1 tokens/s');
  assert.equal(rate({throughput: {images_per_s: 3.14159}}), '3.14 images/s');
  assert.equal(rate({throughput: {samples_per_s: 100}}), '100 samples/s');
  assert.equal(rate({throughput: {}}), '-');
  assert.equal(rate({}), '-');
});

test('GPUs are named with their count beyond one', () => {
  assert.equal(gpusText('RTX 4090', 1), 'RTX 4090');
  assert.equal(gpusText('H100 SXM', 8), '8x H100 SXM');
});
