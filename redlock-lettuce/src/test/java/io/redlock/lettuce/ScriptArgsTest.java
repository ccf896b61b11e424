package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** A script's arguments go on the wire as the bytes Lettuce's own arguments would be. */
class ScriptArgsTest {
  private static final String TOKEN = "0123456789abcdef0123456789abcdef01234567";

  @Test
  void writesTheBytesLettucesArgumentsWrite() {
    for (String[][] keysAndArgs : cases()) {
      String[] keys = keysAndArgs[0];
      String[] args = keysAndArgs[1];
      for (byte[] script :
          List.of(RoundScripts.digest(Script.EXTEND_BATCH), RoundScripts.source(Script.LOCK))) {
        CommandArgs<String, String> lettuces =
            new CommandArgs<>(StringCodec.UTF8)
                .add(script)
                .add(keys.length)
                .addKeys(keys)
                .addValues(args);
        ScriptArgs ours = new ScriptArgs(script, keys, args);

        assertThat(ours.count()).isEqualTo(lettuces.count());
        assertThat(encode(ours))
            .as("%d keys, %d args", keys.length, args.length)
            .isEqualTo(encode(lettuces));
      }
    }
  }

  @Test
  void namesNeitherKeysNorTokens() {
    ScriptArgs args =
        new ScriptArgs(
            RoundScripts.digest(Script.EXTEND_BATCH), new String[] {"orders:42"}, "2000", TOKEN);

    assertThat(args.toString())
        .isEqualTo(args.toCommandString())
        .contains(Script.EXTEND_BATCH.sha1(), "keys=1", "args=2")
        .doesNotContain(TOKEN, "orders:42");
    assertThat(new ScriptArgs(RoundScripts.source(Script.LOCK), new String[0]).toString())
        .contains("<source of " + RoundScripts.source(Script.LOCK).length + " bytes>");
  }

  @Test
  void theFirstKeyIsTheOneLettuceWouldRouteBy() {
    String[] keys = {"ключ:鍵:🔒", "b"};
    assertThat(new ScriptArgs(new byte[40], keys, TOKEN).getFirstEncodedKey())
        .isEqualTo(new CommandArgs<>(StringCodec.UTF8).addKeys(keys).getFirstEncodedKey());
    assertThat(new ScriptArgs(new byte[40], new String[0], TOKEN).getFirstEncodedKey()).isNull();
  }

  /** Numbers of keys and lengths of strings around each change of their number of digits. */
  private static List<String[][]> cases() {
    List<String[][]> cases = new ArrayList<>();
    for (int n : new int[] {0, 1, 9, 10, 11, 99, 100, 1_000}) {
      String[] keys = IntStream.range(0, n).mapToObj(i -> "orders:" + i).toArray(String[]::new);
      String[] args =
          IntStream.range(0, n + 1).mapToObj(i -> i == 0 ? "2000" : TOKEN).toArray(String[]::new);
      cases.add(new String[][] {keys, args});
    }
    List<String> strings = new ArrayList<>();
    for (int length : new int[] {0, 1, 9, 10, 11, 99, 100, 101, 999, 1_000, 10_000, 100_000}) {
      strings.add("k".repeat(length));
    }
    strings.addAll(List.of("ключ:鍵:🔒", "é".repeat(5), "nul\u0000byte", "lone \uD800 surrogate"));
    // chars whose low byte is ASCII ('A', 'B'), and ASCII up to a last char that is not
    strings.addAll(List.of("\u0141\u0142", "orders:4\u0100", "ascii\u007f", "\u0080"));
    String[] mixed = strings.toArray(String[]::new);
    cases.add(new String[][] {mixed, mixed});
    cases.add(new String[][] {new String[] {"only a key"}, new String[0]});
    return cases;
  }

  private static String encode(CommandArgs<String, String> args) {
    Command<String, String, Long> command =
        new Command<>(RoundCommand.EVALSHA, new IntegerOutput<>(StringCodec.UTF8), args);
    ByteBuf target = Unpooled.buffer(16);
    command.encode(target);
    // One char per byte: equal strings are equal bytes.
    String bytes = target.toString(StandardCharsets.ISO_8859_1);
    target.release();
    return bytes;
  }
}
