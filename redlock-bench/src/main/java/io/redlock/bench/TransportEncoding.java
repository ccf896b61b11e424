package io.redlock.bench;

import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.protocol.CommandArgs;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;

/**
 * How the Lettuce transport encodes what it sends: its codec ({@code ExactUtf8Codec}, which
 * gives Lettuce each string's exact UTF-8 size) and its script arguments ({@code ScriptArgs},
 * an {@code EVAL}/{@code EVALSHA}'s arguments written as RESP from arrays). Both are internal
 * to the transport, so they are reached by reflection, and a floor or a JMH benchmark that
 * uses them sends the bytes the library sends, built the way it builds them.
 */
public final class TransportEncoding {
  /** The codec of the transport's connections and commands. */
  public static final RedisCodec<String, String> CODEC = codec();

  private static final MethodHandle SCRIPT_ARGS = scriptArgsConstructor();

  private TransportEncoding() {}

  /**
   * {@code new ScriptArgs(script, keys, args)}: the arguments of an {@code EVALSHA} (with
   * {@code script} the digest) or an {@code EVAL} (the source), in UTF-8.
   */
  @SuppressWarnings("unchecked")
  public static CommandArgs<String, String> scriptArgs(
      byte[] script, String[] keys, String... args) {
    try {
      return (CommandArgs<String, String>) SCRIPT_ARGS.invokeExact(script, keys, args);
    } catch (Throwable e) {
      throw new IllegalStateException("the Lettuce transport's ScriptArgs failed", e);
    }
  }

  @SuppressWarnings("unchecked")
  private static RedisCodec<String, String> codec() {
    try {
      Field field = Class.forName("io.redlock.lettuce.ExactUtf8Codec").getDeclaredField("UTF8");
      field.setAccessible(true);
      return (RedisCodec<String, String>) field.get(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("the Lettuce transport's codec is not where it was", e);
    }
  }

  private static MethodHandle scriptArgsConstructor() {
    try {
      Constructor<?> constructor =
          Class.forName("io.redlock.lettuce.ScriptArgs")
              .getDeclaredConstructor(byte[].class, String[].class, String[].class);
      constructor.setAccessible(true);
      return MethodHandles.lookup()
          .unreflectConstructor(constructor)
          .asType(
              MethodType.methodType(
                  CommandArgs.class, byte[].class, String[].class, String[].class));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("the Lettuce transport's ScriptArgs is not where it was", e);
    }
  }
}
