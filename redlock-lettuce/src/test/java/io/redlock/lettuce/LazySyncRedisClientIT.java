package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisURI;
import io.lettuce.core.StatefulRedisConnectionImpl;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.redlock.testkit.RedisServers;
import java.lang.reflect.Field;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The transport's Lettuce client makes a connection's blocking command interface only when it
 * is first asked for, against a real redis-server: made without it, asked once, the same one
 * after.
 */
class LazySyncRedisClientIT {

  @Test
  void aConnectionMakesItsBlockingInterfaceOnlyWhenAskedAndKeepsIt() throws Exception {
    ClientResources resources = DefaultClientResources.create();
    try (RedisServers servers = RedisServers.start(1)) {
      LazySyncRedisClient client = new LazySyncRedisClient(resources);
      try (StatefulRedisConnection<String, String> connection =
          client.connect(RedisURI.create(servers.uri(0)))) {
        Field made = StatefulRedisConnectionImpl.class.getDeclaredField("sync");
        made.setAccessible(true);
        assertThat(made.get(connection)).as("Lettuce's own field, set when made").isNull();
        assertThat(connection.async().ping().get(10, TimeUnit.SECONDS)).isEqualTo("PONG");

        assertThat(connection.sync().ping()).isEqualTo("PONG");
        assertThat(connection.sync()).isSameAs(connection.sync());
      } finally {
        client.shutdown();
      }
    } finally {
      resources.shutdown().get(10, TimeUnit.SECONDS);
    }
  }
}
