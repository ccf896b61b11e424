package io.redlock.lettuce;

import io.lettuce.core.RedisChannelWriter;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.StatefulRedisConnectionImpl;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.json.JsonParser;
import io.lettuce.core.protocol.PushHandler;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * A Lettuce client whose connections build their blocking command interface ({@code sync()})
 * on first use instead of when they are made. Lettuce builds it as a dynamic proxy of {@link
 * RedisCommands}, an interface of several hundred methods, and generating that proxy class
 * costs about a tenth of a second of the first connection of a JVM (a class-data archive does
 * not keep it on JDK 17). The transport only ever sends commands through {@code async()} and
 * its own command objects, so a one-shot {@code redlock exec} pays the proxy for nothing.
 * Everything else is Lettuce's own connection.
 */
final class LazySyncRedisClient extends RedisClient {

  LazySyncRedisClient(ClientResources resources) {
    super(resources, new RedisURI());
  }

  @Override
  protected <K, V> StatefulRedisConnectionImpl<K, V> newStatefulRedisConnection(
      RedisChannelWriter channelWriter,
      PushHandler pushHandler,
      RedisCodec<K, V> codec,
      Duration timeout) {
    return new Connection<>(
        channelWriter, pushHandler, codec, timeout, getOptions().getJsonParser());
  }

  /** Lettuce's connection, with {@code sync()} made when first asked for. */
  private static final class Connection<K, V> extends StatefulRedisConnectionImpl<K, V> {
    private volatile RedisCommands<K, V> lazySync;

    Connection(
        RedisChannelWriter channelWriter,
        PushHandler pushHandler,
        RedisCodec<K, V> codec,
        Duration timeout,
        Supplier<JsonParser> parser) {
      super(channelWriter, pushHandler, codec, timeout, parser);
    }

    /** Called by Lettuce's constructor: nothing yet (the field it sets is read only by sync()). */
    @Override
    protected RedisCommands<K, V> newRedisSyncCommandsImpl() {
      return null;
    }

    @Override
    public RedisCommands<K, V> sync() {
      RedisCommands<K, V> sync = lazySync;
      if (sync == null) {
        synchronized (this) {
          sync = lazySync;
          if (sync == null) {
            sync = super.newRedisSyncCommandsImpl();
            lazySync = sync;
          }
        }
      }
      return sync;
    }
  }
}
