package io.redlock.bench.jmh;

import io.lettuce.core.SetArgs;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.redlock.bench.TransportEncoding;
import java.nio.charset.StandardCharsets;
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
 * {@code SET key token NX PX ttl} of a one-resource lock, the {@code EVALSHA sha 1 key token}
 * of a release, and the {@code EVALSHA sha 1000 key... ttl token...} of a batch of a thousand
 * auto-extensions, each built as {@code LettuceNodeClient} and {@code BatchedExtensions} build
 * it and encoded into a reused direct buffer of Netty's default allocator, as the RESP bytes
 * that go on the wire.
 *
 * <p>The transport's codec ({@code ExactUtf8Codec}) and script arguments ({@code ScriptArgs})
 * are internal to it, so they are reached by reflection ({@link TransportEncoding}). {@code
 * encodeExtendBatchLettuceArgs} builds the same batch with Lettuce's own {@link CommandArgs} and {@link StringCodec#UTF8}, as
 * the transport did before it had either: an object per argument, a {@code String} per length
 * of ten bytes or more, and a buffer of its own per key and value to learn its length; {@code
 * encodeExtendBatchLettuceArgsExactCodec} with Lettuce's arguments and the transport's codec
 * (no buffer per argument, the rest as before).
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
  private static final byte[] SHA =
      "2d4b8c7e3b1f0f1f5e0b6c1c5e4f8a9b7c6d5e4f".getBytes(StandardCharsets.US_ASCII);
  private static final int BATCH = 1_000;
  private final RedisCodec<String, String> codec = TransportEncoding.CODEC;
  private final List<String> keys = List.of("orders:42");
  private final String token = "0123456789abcdef0123456789abcdef01234567";
  private final long ttlMillis = 10_000;
  private final String[] batchKeys = new String[BATCH];
  private final String[] batchArgs = new String[BATCH + 1];
  private final ByteBuf buffer = ByteBufAllocator.DEFAULT.directBuffer(256);

  public ScriptArgsBench() {
    batchArgs[0] = Long.toString(ttlMillis);
    for (int i = 0; i < BATCH; i++) {
      batchKeys[i] = "orders:" + i;
      batchArgs[i + 1] = String.format("%040x", i);
    }
  }

  @Benchmark
  public int encodeSetNxPx() {
    CommandArgs<String, String> args = new CommandArgs<>(codec).addKey(keys.get(0)).addValue(token);
    SetArgs.Builder.nx().px(ttlMillis).build(args);
    Command<String, String, String> command =
        new Command<>(CommandType.SET, new StatusOutput<>(codec), args);
    buffer.clear();
    command.encode(buffer);
    return buffer.writerIndex();
  }

  @Benchmark
  public int encodeEvalshaUnlock() {
    String[] keyArray = keys.toArray(String[]::new);
    CommandArgs<String, String> args = TransportEncoding.scriptArgs(SHA, keyArray, token);
    Command<String, String, Long> command =
        new Command<>(CommandType.EVALSHA, new IntegerOutput<>(codec), args);
    buffer.clear();
    command.encode(buffer);
    return buffer.writerIndex();
  }

  @Benchmark
  public int encodeExtendBatch() {
    CommandArgs<String, String> args = TransportEncoding.scriptArgs(SHA, batchKeys, batchArgs);
    return encodeBatch(args, codec);
  }

  @Benchmark
  public int encodeExtendBatchLettuceArgs() {
    CommandArgs<String, String> args =
        new CommandArgs<>(StringCodec.UTF8)
            .add(SHA)
            .add(BATCH)
            .addKeys(batchKeys)
            .addValues(batchArgs);
    return encodeBatch(args, StringCodec.UTF8);
  }

  @Benchmark
  public int encodeExtendBatchLettuceArgsExactCodec() {
    CommandArgs<String, String> args =
        new CommandArgs<>(codec).add(SHA).add(BATCH).addKeys(batchKeys).addValues(batchArgs);
    return encodeBatch(args, codec);
  }

  private int encodeBatch(CommandArgs<String, String> args, RedisCodec<String, String> with) {
    Command<String, String, String> command =
        new Command<>(CommandType.EVALSHA, new ValueOutput<>(with), args);
    buffer.clear();
    command.encode(buffer);
    return buffer.writerIndex();
  }

  @TearDown
  public void tearDown() {
    buffer.release();
  }
}
