package io.redlock.lettuce;

import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.codec.ToByteBufEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;

/**
 * UTF-8 strings, each key and value written once, straight into the command's buffer.
 *
 * <p>Lettuce writes an argument's length before its bytes. {@link StringCodec#UTF8} only
 * bounds a string's UTF-8 size (three bytes a char), so Lettuce encodes each of its arguments
 * into a buffer of its own first, to learn the length, then copies it: one buffer taken from
 * the allocator and given back per key and per value (a batch of a thousand auto-extensions
 * took two thousand). This codec tells the exact size ({@link ByteBufUtil#utf8Bytes}, which
 * counts the bytes {@link ByteBufUtil#writeUtf8} writes, an unpaired surrogate as one {@code
 * ?}), so Lettuce writes the length, then the string where it goes. The bytes sent are the
 * same as {@link StringCodec#UTF8}'s; decoding is {@link StringCodec#UTF8}'s.
 *
 * <p>Stateless and thread-safe.
 */
final class ExactUtf8Codec implements RedisCodec<String, String>, ToByteBufEncoder<String, String> {

  static final ExactUtf8Codec UTF8 = new ExactUtf8Codec();

  private static final StringCodec DECODER = StringCodec.UTF8;

  private ExactUtf8Codec() {}

  @Override
  public boolean isEstimateExact() {
    return true;
  }

  @Override
  public int estimateSize(Object keyOrValue) {
    return keyOrValue == null ? 0 : ByteBufUtil.utf8Bytes((CharSequence) keyOrValue);
  }

  @Override
  public void encodeKey(String key, ByteBuf target) {
    write(key, target);
  }

  @Override
  public void encodeValue(String value, ByteBuf target) {
    write(value, target);
  }

  private static void write(String string, ByteBuf target) {
    if (string != null) {
      ByteBufUtil.writeUtf8(target, string);
    }
  }

  @Override
  public ByteBuffer encodeKey(String key) {
    return DECODER.encodeKey(key);
  }

  @Override
  public ByteBuffer encodeValue(String value) {
    return DECODER.encodeValue(value);
  }

  @Override
  public String decodeKey(ByteBuffer bytes) {
    return DECODER.decodeKey(bytes);
  }

  @Override
  public String decodeValue(ByteBuffer bytes) {
    return DECODER.decodeValue(bytes);
  }
}
