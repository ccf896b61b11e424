package io.redlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.redlock.spi.ExtendRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The floors and the JMH benchmark encode with the transport's own codec, script arguments and
 * batch bodies ({@link TransportEncoding}), reached by reflection: what they reach is the transport's, and
 * it writes what Lettuce's own arguments write.
 */
class TransportEncodingTest {

  @Test
  void theCodecIsTheTransports() {
    assertThat(TransportEncoding.CODEC.getClass().getName())
        .isEqualTo("io.redlock.lettuce.ExactUtf8Codec");
  }

  @Test
  void scriptArgumentsAreTheTransportsAndWriteWhatLettuceWrites() {
    byte[] sha = "2d4b8c7e3b1f0f1f5e0b6c1c5e4f8a9b7c6d5e4f".getBytes(StandardCharsets.US_ASCII);
    String[] keys = {"résumé", "orders:42"};
    String[] args = {"0123456789abcdef0123456789abcdef01234567", "10000"};

    CommandArgs<String, String> ours = TransportEncoding.scriptArgs(sha, keys, args);
    CommandArgs<String, String> lettuces =
        new CommandArgs<>(StringCodec.UTF8).add(sha).add(keys.length).addKeys(keys).addValues(args);

    assertThat(ours.getClass().getName()).isEqualTo("io.redlock.lettuce.ScriptArgs");
    assertThat(bytes(ours)).isEqualTo(bytes(lettuces));
  }

  @Test
  void aBatchBodyIsTheTransportsAndWritesWhatLettuceWrites() {
    byte[] sha = "2d4b8c7e3b1f0f1f5e0b6c1c5e4f8a9b7c6d5e4f".getBytes(StandardCharsets.US_ASCII);
    String token = "0123456789abcdef0123456789abcdef01234567";
    List<ExtendRequest> requests =
        List.of(
            new ExtendRequest(List.of("résumé"), token, 10_000),
            new ExtendRequest(List.of("orders:42"), token.toUpperCase(Locale.ROOT), 10_000));

    Object body = TransportEncoding.batchBody(requests);
    CommandArgs<String, String> lettuces =
        new CommandArgs<>(StringCodec.UTF8)
            .add(sha)
            .add(2)
            .addKeys("résumé", "orders:42")
            .addValues("10000", token, token.toUpperCase(Locale.ROOT));

    assertThat(body.getClass().getName()).isEqualTo("io.redlock.lettuce.BatchBody");
    assertThat(bytes(TransportEncoding.withScript(body, sha))).isEqualTo(bytes(lettuces));
  }

  private static byte[] bytes(CommandArgs<String, String> args) {
    ByteBuf buffer = Unpooled.buffer();
    try {
      args.encode(buffer);
      byte[] bytes = new byte[buffer.readableBytes()];
      buffer.readBytes(bytes);
      return bytes;
    } finally {
      buffer.release();
    }
  }
}
