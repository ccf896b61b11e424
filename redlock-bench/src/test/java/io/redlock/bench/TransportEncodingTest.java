package io.redlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The floors and the JMH benchmark encode with the transport's own codec and script arguments
 * ({@link TransportEncoding}), reached by reflection: what they reach is the transport's, and
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
