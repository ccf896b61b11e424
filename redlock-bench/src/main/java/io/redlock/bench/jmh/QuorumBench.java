package io.redlock.bench.jmh;

import io.redlock.internal.Quorum;
import io.redlock.internal.Round;
import io.redlock.internal.RoundTimeouts;
import io.redlock.internal.TimeSource;
import io.redlock.spi.NodeClient;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Quorum bookkeeping: the pure decision ({@link Quorum#decide}) over every vote count of 5
 * nodes, and a whole {@link Round} (5 requests, 5 votes, decision and settlement) over 5
 * in-memory nodes that answer at once, on a clock whose timer does nothing.
 *
 * <pre>java -jar redlock-bench/target/benchmarks.jar QuorumBench -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class QuorumBench {
  private static final CompletableFuture<Boolean> GRANTED = CompletableFuture.completedFuture(true);

  /** A clock whose timer never fires: a round here always settles before its timeout. */
  static final TimeSource NO_TIMER =
      new TimeSource() {
        @Override
        public long nanoTime() {
          return System.nanoTime();
        }

        @Override
        public Cancellable schedule(Runnable task, long delayNanos) {
          return () -> {};
        }
      };

  private List<NodeClient> nodes;
  private final Round.Request request = (index, node) -> GRANTED;

  /** Its timer never fires; settled rounds leave the queue as the next round starts. */
  private final RoundTimeouts timeouts = new RoundTimeouts(NO_TIMER, 50_000_000L);

  @Setup
  public void setUp() {
    nodes = new ArrayList<>();
    for (String uri : InMemoryNodes.uris(5)) {
      nodes.add(new InMemoryNodes.Node(uri, "run-1"));
    }
  }

  @Benchmark
  public void decideAllCounts(Blackhole bh) {
    for (int granted = 0; granted <= 5; granted++) {
      for (int failed = 0; granted + failed <= 5; failed++) {
        bh.consume(Quorum.decide(5, 3, granted, failed));
      }
    }
  }

  @Benchmark
  public Round.Result round() {
    Round round = Round.start(nodes, 3, timeouts, request);
    return round.settled().join();
  }
}
