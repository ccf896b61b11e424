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
import io.redlock.spi.ExtendRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
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
 * auto-extensions, each encoded into a reused direct buffer of Netty's default allocator, as
 * the RESP bytes that go on the wire. {@code encodeExtendBatch} is one node's batch from its
 * script arguments ({@code ScriptArgs}); {@code encodeExtendBatchOnceForFiveNodes} is a batch
 * to five nodes as {@code BatchedExtensions} sends it, its keys and arguments encoded once
 * ({@code BatchBody}) and copied into each node's command; {@code
 * encodeExtendBatchPerNodeForFiveNodes} the same five commands each built and encoded from the
 * strings, as the transport did before.
 *
 * <p>The transport's codec ({@code ExactUtf8Codec}) and script arguments ({@code ScriptArgs},
 * {@code BatchBody}) are internal to it, so they are reached by reflection ({@link
 * TransportEncoding}). {@code
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
  private static final int NODES = 5;
  private final RedisCodec<String, String> codec = TransportEncoding.CODEC;
  private final List<String> keys = List.of("orders:42");
  private final String token = "0123456789abcdef0123456789abcdef01234567";
  private final long ttlMillis = 10_000;
  private final String[] batchKeys = new String[BATCH];
  private final String[] batchArgs = new String[BATCH + 1];
  private final List<List<String>> batchKeyLists = new ArrayList<>(BATCH);
  private final ByteBuf buffer = ByteBufAllocator.DEFAULT.directBuffer(256);

  public ScriptArgsBench() {
    batchArgs[0] = Long.toString(ttlMillis);
    for (int i = 0; i < BATCH; i++) {
      batchKeys[i] = "orders:" + i;
      batchArgs[i + 1] = String.format("%040x", i);
      batchKeyLists.add(List.of(batchKeys[i]));
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

  /**
   * One batch of a thousand auto-extensions as the transport sends it to five nodes: its keys
   * and arguments encoded once ({@code BatchBody}), then each node's command written from those
   * bytes. The requests are made for each batch, as the library makes them.
   */
  @Benchmark
  public int encodeExtendBatchOnceForFiveNodes() {
    Object body = TransportEncoding.batchBody(batchRequests());
    int written = 0;
    for (int node = 0; node < NODES; node++) {
      written += encodeBatch(TransportEncoding.withScript(body, SHA), codec);
    }
    return written;
  }

  /**
   * The same batch to five nodes as the transport sent it before {@code BatchBody}: each node's
   * script arguments built and encoded from the strings.
   */
  @Benchmark
  public int encodeExtendBatchPerNodeForFiveNodes() {
    List<ExtendRequest> requests = batchRequests();
    int written = 0;
    for (int node = 0; node < NODES; node++) {
      String[] keys = new String[requests.size()];
      String[] args = new String[requests.size() + 1];
      args[0] = Long.toString(requests.get(0).ttlMillis());
      for (int i = 0; i < keys.length; i++) {
        keys[i] = requests.get(i).keys().get(0);
        args[i + 1] = requests.get(i).token();
      }
      written += encodeBatch(TransportEncoding.scriptArgs(SHA, keys, args), codec);
    }
    return written;
  }

  private List<ExtendRequest> batchRequests() {
    List<ExtendRequest> requests = new ArrayList<>(BATCH);
    for (int i = 0; i < BATCH; i++) {
      requests.add(new ExtendRequest(batchKeyLists.get(i), batchArgs[i + 1], ttlMillis));
    }
    return requests;
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
