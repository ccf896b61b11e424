package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The transport's codec sends the bytes Lettuce's UTF-8 codec sends, without a buffer of its
 * own per argument.
 */
class ExactUtf8CodecTest {
  private static final List<String> STRINGS =
      List.of(
          "",
          "orders:42",
          "0123456789abcdef0123456789abcdef01234567",
          "ключ:鍵:🔒",
          "é".repeat(513),
          "nul\u0000byte",
          "tab\tand\nnewline",
          "high surrogate alone \uD800 then text",
          "low surrogate alone \uDC00",
          "ends in a high surrogate \uD83D",
          "x".repeat(1024));

  @Test
  void aCommandIsEncodedToTheSameBytesAsWithLettucesUtf8Codec() {
    for (String string : STRINGS) {
      assertThat(encode(ExactUtf8Codec.UTF8, string, new CountingAllocator()))
          .as("%s", string)
          .isEqualTo(encode(StringCodec.UTF8, string, new CountingAllocator()));
    }
  }

  @Test
  void eachArgumentIsWrittenWhereItGoesWithoutABufferOfItsOwn() {
    CountingAllocator lettuces = new CountingAllocator();
    encode(StringCodec.UTF8, "orders:42", lettuces);
    CountingAllocator exact = new CountingAllocator();
    encode(ExactUtf8Codec.UTF8, "orders:42", exact);

    // One key and one value: Lettuce's UTF-8 codec takes a buffer for each to learn its length.
    assertThat(lettuces.taken).isEqualTo(2);
    assertThat(exact.taken).isZero();
  }

  @Test
  void theSizeIsTheNumberOfBytesWritten() {
    for (String string : STRINGS) {
      ByteBuf target = UnpooledByteBufAllocator.DEFAULT.heapBuffer();
      ExactUtf8Codec.UTF8.encodeValue(string, target);
      assertThat(ExactUtf8Codec.UTF8.estimateSize(string))
          .as("%s", string)
          .isEqualTo(target.readableBytes());
      target.release();
    }
    assertThat(ExactUtf8Codec.UTF8.estimateSize(null)).isZero();
  }

  @Test
  void decodesAsUtf8() {
    for (String string : List.of("orders:42", "ключ:鍵:🔒", "nul\u0000byte")) {
      assertThat(
              ExactUtf8Codec.UTF8.decodeValue(
                  ByteBuffer.wrap(string.getBytes(StandardCharsets.UTF_8))))
          .isEqualTo(string);
      assertThat(ExactUtf8Codec.UTF8.decodeKey(ExactUtf8Codec.UTF8.encodeKey(string)))
          .isEqualTo(string);
    }
  }

  /** {@code EVALSHA sha 1 key value} with {@code string} as key and value, as sent. */
  private static String encode(
      RedisCodec<String, String> codec, String string, CountingAllocator allocator) {
    CommandArgs<String, String> args =
        new CommandArgs<>(codec)
            .add("2d4b8c7e3b1f0f1f5e0b6c1c5e4f8a9b7c6d5e4f")
            .add(1)
            .addKeys(string)
            .addValues(string);
    Command<String, String, Long> command =
        new Command<>(RoundCommand.EVALSHA, new IntegerOutput<>(codec), args);
    ByteBuf target = allocator.heapBuffer(64);
    allocator.taken = 0;
    command.encode(target);
    String bytes = ByteBufUtil.hexDump(target);
    target.release();
    return bytes;
  }

  /** An allocator that counts the buffers it gives. */
  private static final class CountingAllocator extends AbstractByteBufAllocator {
    int taken;

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      taken++;
      return new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      taken++;
      return new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }
  }
}
