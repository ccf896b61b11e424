/**
 * Real {@code redis-server} processes for tests: a fleet of independent masters on loopback
 * ports, with intention-named faults (kill, pause, restart) and a tiny RESP client to inspect
 * them.
 *
 * <p>Entry points are {@link io.redlock.testkit.RedisServers} and
 * {@link io.redlock.testkit.RedisBinary}.
 */
package io.redlock.testkit;
