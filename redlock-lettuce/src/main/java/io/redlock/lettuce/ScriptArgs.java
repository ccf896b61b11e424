package io.redlock.lettuce;

import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The arguments of an {@code EVAL} or {@code EVALSHA}: the script (its source or its digest),
 * the number of keys, the keys, then the other arguments, each written as a RESP bulk string
 * straight from the arrays the caller built, in UTF-8.
 *
 * <p>The bytes are those Lettuce's own {@link CommandArgs} writes for the same strings with
 * {@link ExactUtf8Codec}; what is left out is its bookkeeping per argument: an object wrapping
 * each key and value, the list that holds them, and a {@code String} for every length of ten
 * bytes or more (Lettuce writes a length by {@link Long#toString}). A batch of a thousand
 * auto-extensions made 127 kB of garbage that way (ScriptArgsBench).
 *
 * <p>{@link #toString()} names the script's reference and the number of keys and arguments,
 * never their values (the tokens).
 */
final class ScriptArgs extends CommandArgs<String, String> {
  private static final short CRLF = ('\r' << 8) | '\n';

  private final byte[] script;
  private final String[] keys;
  private final String[] args;

  /**
   * @param script the script's source ({@code EVAL}) or its SHA-1 digest ({@code EVALSHA}),
   *     in UTF-8 ({@link RoundScripts#source}, {@link RoundScripts#digest})
   */
  ScriptArgs(byte[] script, String[] keys, String... args) {
    super(ExactUtf8Codec.UTF8);
    this.script = script;
    this.keys = keys;
    this.args = args;
  }

  @Override
  public int count() {
    return 2 + keys.length + args.length;
  }

  @Override
  public void encode(ByteBuf target) {
    head(target, script, keys.length);
    byte[] ascii = scratch();
    for (String key : keys) {
      bulk(target, key, ascii);
    }
    for (String arg : args) {
      bulk(target, arg, ascii);
    }
  }

  /** The script (its source or digest) and the number of keys, each as a bulk string. */
  static void head(ByteBuf target, byte[] script, int keys) {
    target.ensureWritable(script.length + 16);
    target.writeByte('$');
    length(target, script.length);
    target.writeShort(CRLF);
    target.writeBytes(script);
    target.writeShort(CRLF);
    target.writeByte('$');
    length(target, digits(keys));
    target.writeShort(CRLF);
    length(target, keys);
    target.writeShort(CRLF);
  }

  /** The calling thread's scratch array for {@link #bulk}. */
  static byte[] scratch() {
    return SCRATCH.get();
  }

  /**
   * Each encoding thread's (an event loop's, or the thread that encodes a {@link BatchBody})
   * scratch array for {@link #bulk}: longer strings take Netty's way.
   */
  private static final FastThreadLocal<byte[]> SCRATCH =
      new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
          return new byte[1024];
        }
      };

  @Override
  public ByteBuffer getFirstEncodedKey() {
    return keys.length == 0 ? null : ExactUtf8Codec.UTF8.encodeKey(keys[0]);
  }

  @Override
  public String toCommandString() {
    return toString();
  }

  @Override
  public String toString() {
    return describe("ScriptArgs", script, keys.length, args.length);
  }

  /**
   * {@code name[script=<digest or size of the source>, keys=<count>, args=<count>]}: never a
   * key or an argument (a token).
   */
  static String describe(String name, byte[] script, int keys, int args) {
    return name
        + "[script="
        + (script.length == 40
            ? new String(script, StandardCharsets.US_ASCII)
            : "<source of " + script.length + " bytes>")
        + ", keys="
        + keys
        + ", args="
        + args
        + "]";
  }

  /**
   * {@code $<length>\r\n<utf-8 bytes>\r\n}. An ASCII string (keys and tokens almost always
   * are) that fits {@code ascii}, a scratch array, is copied through it: Netty's UTF-8
   * functions read a {@code CharSequence} one {@code charAt} at a time through an interface
   * call, once to count the bytes and once to write them (a third of the Java samples of a
   * client holding 100,000 leases, in one JFR profile); this is one loop over the chars and an
   * array copy. {@code ScriptArgsBench.encodeExtendBatch}: 68.6 and 91.0 µs before, 57.5 and
   * 59.9 µs after (two JMH runs each); the client's CPU time a second under 100,000 held
   * leases did not move beyond the spread of runs.
   */
  static void bulk(ByteBuf target, String value, byte[] ascii) {
    int chars = value.length();
    boolean plain = chars <= ascii.length && copyIfAscii(value, chars, ascii);
    int size = plain ? chars : ByteBufUtil.utf8Bytes(value);
    target.ensureWritable(size + 16);
    target.writeByte('$');
    length(target, size);
    target.writeShort(CRLF);
    if (plain) {
      target.writeBytes(ascii, 0, chars);
    } else {
      ByteBufUtil.writeUtf8(target, value);
    }
    target.writeShort(CRLF);
  }

  /**
   * Copies {@code value} into {@code ascii} if every char of it is ASCII (then its UTF-8 bytes
   * are its chars' low bytes); otherwise copies nothing and returns {@code false}.
   */
  @SuppressWarnings("deprecation") // getBytes(int, int, byte[], int): each char's low byte
  private static boolean copyIfAscii(String value, int chars, byte[] ascii) {
    for (int i = 0; i < chars; i++) {
      if (value.charAt(i) >= 0x80) {
        return false;
      }
    }
    value.getBytes(0, chars, ascii, 0);
    return true;
  }

  /** The decimal digits of {@code n} (not negative), written without a {@code String}. */
  private static void length(ByteBuf target, int n) {
    int divisor = 1;
    while (n / divisor >= 10) {
      divisor *= 10;
    }
    for (; divisor > 0; divisor /= 10) {
      target.writeByte('0' + n / divisor % 10);
    }
  }

  /** How many decimal digits {@code n} (not negative) has. */
  private static int digits(int n) {
    int digits = 1;
    for (int rest = n; rest >= 10; rest /= 10) {
      digits++;
    }
    return digits;
  }
}
