/**
 * Real {@code redis-server} processes for tests: a fleet of independent masters on loopback
 * ports, with intention-named faults (kill, pause, restart) and a tiny RESP client to inspect
 * them, plus TCP fault proxies in front of them for network faults (latency and jitter, black
 * holes, dropped connections, per-client partitions), each recorded in a fault log.
 *
 * <p>Entry points are {@link io.redlock.testkit.RedisServers},
 * {@link io.redlock.testkit.RedisBinary}, {@link io.redlock.testkit.FaultProxy} and
 * {@link io.redlock.testkit.ProxiedFleet}.
 */
package io.redlock.testkit;
