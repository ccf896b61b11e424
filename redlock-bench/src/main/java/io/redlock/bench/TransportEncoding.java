package io.redlock.bench;

import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.protocol.CommandArgs;
import io.redlock.spi.ExtendRequest;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.List;

/**
 * How the Lettuce transport encodes what it sends: its codec ({@code ExactUtf8Codec}, which
 * gives Lettuce each string's exact UTF-8 size) and its script arguments ({@code ScriptArgs},
 * an {@code EVAL}/{@code EVALSHA}'s arguments written as RESP from arrays; {@code BatchBody},
 * an auto-extension batch's keys and arguments encoded once for every node). All are internal
 * to the transport, so they are reached by reflection, and a floor or a JMH benchmark that
 * uses them sends the bytes the library sends, built the way it builds them.
 */
public final class TransportEncoding {
  /** The codec of the transport's connections and commands. */
  public static final RedisCodec<String, String> CODEC = codec();

  private static final MethodHandle SCRIPT_ARGS = scriptArgsConstructor();
  private static final MethodHandle BATCH_BODY = batchBodyEncode();
  private static final MethodHandle WITH_SCRIPT = batchBodyWithScript();

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

  /**
   * {@code BatchBody.encode(requests, null)}: the keys, ttl and tokens of one auto-extension
   * batch, encoded once for every node it goes to ({@link #withScript}).
   */
  public static Object batchBody(List<ExtendRequest> requests) {
    try {
      return (Object) BATCH_BODY.invokeExact(requests, (List<Integer>) null);
    } catch (Throwable e) {
      throw new IllegalStateException("the Lettuce transport's BatchBody failed", e);
    }
  }

  /**
   * {@code body.withScript(script)}: the arguments of an {@code EVALSHA} (with {@code script}
   * the digest) or an {@code EVAL} (the source) of a {@link #batchBody}, its bytes as they are.
   */
  @SuppressWarnings("unchecked")
  public static CommandArgs<String, String> withScript(Object body, byte[] script) {
    try {
      return (CommandArgs<String, String>) WITH_SCRIPT.invokeExact(body, script);
    } catch (Throwable e) {
      throw new IllegalStateException("the Lettuce transport's BatchBody failed", e);
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

  private static MethodHandle batchBodyEncode() {
    try {
      Method encode =
          Class.forName("io.redlock.lettuce.BatchBody")
              .getDeclaredMethod("encode", List.class, List.class);
      encode.setAccessible(true);
      return MethodHandles.lookup()
          .unreflect(encode)
          .asType(MethodType.methodType(Object.class, List.class, List.class));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("the Lettuce transport's BatchBody is not where it was", e);
    }
  }

  private static MethodHandle batchBodyWithScript() {
    try {
      Class<?> type = Class.forName("io.redlock.lettuce.BatchBody");
      Method withScript = type.getDeclaredMethod("withScript", byte[].class);
      withScript.setAccessible(true);
      return MethodHandles.lookup()
          .unreflect(withScript)
          .asType(MethodType.methodType(CommandArgs.class, Object.class, byte[].class));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("the Lettuce transport's BatchBody is not where it was", e);
    }
  }
}
