package io.redlock.bench.jmh;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A whole {@code acquire} + {@code release} through the public API over 5 in-memory nodes
 * that answer at once: the algorithm's CPU and allocation per cycle with no network and no
 * Redis (token, 2 rounds of 5 votes, validity, lease, tracking, the node-timeout deadlines of
 * each round). With {@code -prof gc}, {@code gc.alloc.rate.norm} is the bytes allocated per
 * acquire+release.
 *
 * <pre>
 * ./mvnw -B -q -pl redlock-bench -am package -DskipTests
 * java -jar redlock-bench/target/benchmarks.jar FullCycleBench -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FullCycleBench {
  private static final Duration TTL = Duration.ofSeconds(10);
  private InMemoryNodes transport;
  private Redlock redlock;
  private Redlock heard;

  @Setup
  public void setUp() {
    transport = new InMemoryNodes();
    redlock =
        Redlock.create(
            RedlockConfig.builder().nodes(InMemoryNodes.uris(5)).ttl(TTL).build(),
            transport); // in-memory nodes report a day of uptime: the guard counts them
    heard =
        Redlock.create(
            RedlockConfig.builder()
                .nodes(InMemoryNodes.uris(5))
                .ttl(TTL)
                .restartGuard(false)
                .listener(new io.redlock.RedlockListener() {})
                .build(),
            transport);
  }

  @Benchmark
  public String acquireRelease() throws InterruptedException {
    Lease lease = redlock.acquire("orders:42", TTL);
    lease.release();
    return lease.token();
  }

  /**
   * {@link #acquireRelease()} with a listener that does nothing: what reporting costs when
   * someone listens (events, votes, the deadline watch). Without a listener,
   * {@link #acquireRelease()} pays one read of a final field per place that could report.
   */
  @Benchmark
  public String acquireReleaseHeard() throws InterruptedException {
    Lease lease = heard.acquire("orders:42", TTL);
    lease.release();
    return lease.token();
  }

  @TearDown
  public void tearDown() {
    redlock.close();
    heard.close();
    transport.close();
  }
}
