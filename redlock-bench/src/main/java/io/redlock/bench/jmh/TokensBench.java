package io.redlock.bench.jmh;

import io.redlock.internal.Tokens;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Token generation, {@link Tokens#next()}: 20 bytes from {@code SecureRandom} as 40 hex
 * digits, once per acquisition attempt. With {@code -t 4} it shows whether threads contend on
 * the shared {@code SecureRandom}.
 *
 * <pre>java -jar redlock-bench/target/benchmarks.jar TokensBench -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class TokensBench {
  private final Tokens tokens = new Tokens();

  @Benchmark
  public String next() {
    return tokens.next();
  }
}
