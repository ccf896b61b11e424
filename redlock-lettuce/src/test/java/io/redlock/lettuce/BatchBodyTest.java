package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.redlock.spi.ExtendRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** A batch encoded once goes to each node as the bytes it would have encoded on its own. */
class BatchBodyTest {
  private static final String TOKEN = "0123456789abcdef0123456789abcdef01234567";

  @Test
  void writesTheBytesOfTheSameScriptArguments() {
    for (int n : new int[] {1, 9, 10, 11, 1_000}) {
      List<ExtendRequest> requests = requests(n, "orders:", 2_000);
      for (byte[] script :
          List.of(
              RoundScripts.digest(Script.EXTEND_BATCH), RoundScripts.source(Script.EXTEND_BATCH))) {
        CommandArgs<String, String> once = BatchBody.encode(requests, null).withScript(script);
        ScriptArgs each = scriptArgs(script, requests);

        assertThat(once.count()).isEqualTo(each.count());
        assertThat(encode(once)).as("%d keys", n).isEqualTo(encode(each));
        assertThat(once.getFirstEncodedKey()).isEqualTo(each.getFirstEncodedKey());
      }
    }
  }

  @Test
  void writesKeysThatAreNotAsciiAndLongerThanTheScratchArray() {
    List<ExtendRequest> requests =
        List.of(
            new ExtendRequest(List.of("ключ:鍵:🔒"), TOKEN, 30_000),
            new ExtendRequest(List.of("k".repeat(5_000)), "é".repeat(3), 30_000),
            new ExtendRequest(List.of("lone \uD800 surrogate"), TOKEN, 30_000));
    byte[] sha = RoundScripts.digest(Script.EXTEND_BATCH);

    assertThat(encode(BatchBody.encode(requests, null).withScript(sha)))
        .isEqualTo(encode(scriptArgs(sha, requests)));
  }

  @Test
  void encodesOnlyTheRequestsOfItsIndexes() {
    List<ExtendRequest> requests = requests(5, "orders:", 2_000);
    byte[] sha = RoundScripts.digest(Script.EXTEND_BATCH);

    assertThat(encode(BatchBody.encode(requests, List.of(3, 1)).withScript(sha)))
        .isEqualTo(encode(scriptArgs(sha, List.of(requests.get(3), requests.get(1)))));
  }

  @Test
  void theNodesOfATransportShareTheLastBatchOnlyForTheSameRequests() {
    BatchBody.Last last = new BatchBody.Last();
    List<ExtendRequest> requests = requests(3, "orders:", 2_000);
    BatchBody body = last.of(requests);

    // The next node of the same batch, and the same requests in another list.
    assertThat(last.of(requests)).isSameAs(body);
    assertThat(last.of(new ArrayList<>(requests))).isSameAs(body);

    // Equal requests that are other objects, a list changed in place, one request fewer,
    // another order: encoded again, each with its own bytes.
    List<ExtendRequest> equal = requests(3, "orders:", 2_000);
    assertThat(equal).isEqualTo(requests);
    assertThat(last.of(equal)).isNotSameAs(body);

    List<ExtendRequest> changed = new ArrayList<>(requests);
    BatchBody before = last.of(changed);
    changed.set(1, new ExtendRequest(List.of("orders:1"), TOKEN.replace('0', 'f'), 2_000));
    BatchBody after = last.of(changed);
    assertThat(after).isNotSameAs(before);
    byte[] sha = RoundScripts.digest(Script.EXTEND_BATCH);
    assertThat(encode(after.withScript(sha))).isEqualTo(encode(scriptArgs(sha, changed)));

    assertThat(last.of(requests.subList(0, 2))).isNotSameAs(last.of(requests));
    List<ExtendRequest> reversed = new ArrayList<>(requests);
    java.util.Collections.reverse(reversed);
    assertThat(encode(last.of(reversed).withScript(sha)))
        .isEqualTo(encode(scriptArgs(sha, reversed)));
  }

  @Test
  void leavesNettysAllocatorsCountOfHeapInUseAlone() {
    // The body is never released: an allocator's buffer would stay counted as in use for good.
    long before = UnpooledByteBufAllocator.DEFAULT.metric().usedHeapMemory();
    BatchBody.encode(requests(1_000, "orders:", 2_000), null);
    assertThat(UnpooledByteBufAllocator.DEFAULT.metric().usedHeapMemory()).isEqualTo(before);
  }

  @Test
  void namesNeitherKeysNorTokens() {
    BatchBody body =
        BatchBody.encode(List.of(new ExtendRequest(List.of("orders:42"), TOKEN, 2_000)), null);
    CommandArgs<String, String> args = body.withScript(RoundScripts.digest(Script.EXTEND_BATCH));

    assertThat(body.toString()).contains("keys=1").doesNotContain(TOKEN, "orders:42");
    assertThat(args.toString())
        .isEqualTo(args.toCommandString())
        .contains(Script.EXTEND_BATCH.sha1(), "keys=1", "args=2")
        .doesNotContain(TOKEN, "orders:42");
  }

  @Test
  void countsInTheBacklogAsTheScriptOfStringsCounted() {
    List<ExtendRequest> requests = requests(1_000, "orders:", 30_000);
    long chars =
        requests.stream().mapToLong(r -> r.keys().get(0).length() + r.token().length() + 2).sum();

    assertThat(BatchBody.encode(requests, null).size())
        .isEqualTo(NodeBacklog.OVERHEAD_BYTES + "30000".length() + chars);
  }

  private static List<ExtendRequest> requests(int n, String prefix, long ttlMillis) {
    return IntStream.range(0, n)
        .mapToObj(
            i ->
                new ExtendRequest(
                    List.of(prefix + i), TOKEN.substring(0, 30) + (1_000_000_000 + i), ttlMillis))
        .toList();
  }

  /** The arguments each node built of its own before: keys, the ttl, then the tokens. */
  private static ScriptArgs scriptArgs(byte[] script, List<ExtendRequest> requests) {
    String[] keys = requests.stream().map(r -> r.keys().get(0)).toArray(String[]::new);
    String[] args = new String[requests.size() + 1];
    args[0] = Long.toString(requests.get(0).ttlMillis());
    for (int i = 0; i < requests.size(); i++) {
      args[i + 1] = requests.get(i).token();
    }
    return new ScriptArgs(script, keys, args);
  }

  private static String encode(CommandArgs<String, String> args) {
    Command<String, String, String> command =
        new Command<>(RoundCommand.EVALSHA, new ValueOutput<>(StringCodec.UTF8), args);
    ByteBuf target = Unpooled.buffer(16);
    command.encode(target);
    // One char per byte: equal strings are equal bytes.
    String bytes = target.toString(StandardCharsets.ISO_8859_1);
    target.release();
    return bytes;
  }
}
