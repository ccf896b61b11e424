package io.redlock.bench.jmh;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the Lettuce transport builds and encodes per node and call, without a connection: the
 * {@code SET key token NX PX ttl} of a one-resource lock, and the {@code EVALSHA sha 1 key
 * token} of a release (as {@code LettuceNodeClient} builds it: key array, argument array,
 * Lettuce {@link CommandArgs}), each encoded into a reused buffer as the RESP bytes that go
 * on the wire.
 *
 * <pre>java -jar redlock-bench/target/benchmarks.jar ScriptArgsBench -prof gc</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ScriptArgsBench {
  private static final String SHA = "2d4b8c7e3b1f0f1f5e0b6c1c5e4f8a9b7c6d5e4f";
  private final List<String> keys = List.of("orders:42");
  private final String token = "0123456789abcdef0123456789abcdef01234567";
  private final long ttlMillis = 10_000;
  private final ByteBuf buffer = Unpooled.buffer(256);

  @Benchmark
  public int encodeSetNxPx() {
    CommandArgs<String, String> args =
        new CommandArgs<>(StringCodec.UTF8).addKey(keys.get(0)).addValue(token);
    SetArgs.Builder.nx().px(ttlMillis).build(args);
    Command<String, String, String> command =
        new Command<>(CommandType.SET, new StatusOutput<>(StringCodec.UTF8), args);
    buffer.clear();
    command.encode(buffer);
    return buffer.writerIndex();
  }

  @Benchmark
  public int encodeEvalshaUnlock() {
    String[] keyArray = keys.toArray(String[]::new);
    String[] values = {token};
    CommandArgs<String, String> args =
        new CommandArgs<>(StringCodec.UTF8)
            .add(SHA)
            .add(keyArray.length)
            .addKeys(keyArray)
            .addValues(values);
    Command<String, String, Long> command =
        new Command<>(CommandType.EVALSHA, new IntegerOutput<>(StringCodec.UTF8), args);
    buffer.clear();
    command.encode(buffer);
    return buffer.writerIndex() + (ScriptOutputType.INTEGER.ordinal() & 0);
  }

  @TearDown
  public void tearDown() {
    buffer.release();
  }
}
