package io.redlock.cli;

import java.time.Duration;

/**
 * The validated options of one {@code redlock demo} run, as the parts of the demo that describe
 * the run (the summary table, the report) see them.
 *
 * <p>Immutable, so it is safe to share between threads.
 *
 * @param duration how long the workers run
 * @param nodes how many local redis-server nodes there are
 * @param workers how many worker threads there are, split over two Redlock clients
 * @param resources how many resources the workers compete for
 * @param ttl the lease time to live
 */
record DemoSettings(Duration duration, int nodes, int workers, int resources, Duration ttl) {}
