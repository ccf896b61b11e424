// node-redlock peer for the load harness (io.redlock.bench.LoadHarness --with-node).
// Usage: node bench.js <4|5> <port,port,...> <resource> <warmupMs> <windowMs>
// The servers' password comes in REDLOCK_BENCH_PASSWORD (never on the command line).
// Uncontended acquire+release on one resource against 127.0.0.1 servers, one at a time, with
// node-redlock 4.2.0 or 5.0.0-beta.2 (their APIs differ: lock/unlock against acquire/release);
// prints one JSON line with latency percentiles in microseconds.
'use strict';
const Redis = require('ioredis');

const SETTINGS = { driftFactor: 0.01, retryCount: 10, retryDelay: 2, retryJitter: 1 };

/** A function that takes and gives back the lock once, for the given major version. */
function cycleOf(major, clients, resource) {
  if (major === '4') {
    const Redlock = require('redlock4');
    const redlock = new Redlock(clients, SETTINGS);
    redlock.on('clientError', () => {});
    return async () => (await redlock.lock(resource, 10000)).unlock();
  }
  if (major === '5') {
    const Redlock = require('redlock5').default;
    const redlock = new Redlock(clients, SETTINGS);
    redlock.on('error', () => {});
    return async () => (await redlock.acquire([resource], 10000)).release();
  }
  throw new Error('unknown node-redlock line: ' + major + ' (4 or 5)');
}

async function main() {
  const [major, portList, resource, warmupMs, windowMs] = process.argv.slice(2);
  const clients = portList.split(',').map((port) =>
    new Redis({
      host: '127.0.0.1',
      port: Number(port),
      password: process.env.REDLOCK_BENCH_PASSWORD,
      maxRetriesPerRequest: 1,
    }));
  const cycle = cycleOf(major, clients, resource);
  const samples = [];
  let failures = 0;
  const start = process.hrtime.bigint();
  const measureFrom = start + BigInt(warmupMs) * 1000000n;
  const end = measureFrom + BigInt(windowMs) * 1000000n;
  for (;;) {
    const t0 = process.hrtime.bigint();
    if (t0 >= end) break;
    try {
      await cycle();
    } catch (e) {
      if (t0 >= measureFrom) failures++;
      continue;
    }
    const t1 = process.hrtime.bigint();
    if (t0 >= measureFrom && t1 <= end) samples.push(Number(t1 - t0) / 1000);
  }
  samples.sort((a, b) => a - b);
  const at = (p) => samples.length === 0 ? NaN
    : samples[Math.min(samples.length - 1, Math.ceil((p / 100) * samples.length) - 1)];
  console.log(JSON.stringify({
    p50Micros: at(50), p99Micros: at(99), p999Micros: at(99.9),
    opsPerSecond: samples.length / (Number(windowMs) / 1000), count: samples.length, failures,
  }));
  await Promise.all(clients.map((c) => c.quit()));
}

main().catch((e) => { console.error(e); process.exit(1); });
