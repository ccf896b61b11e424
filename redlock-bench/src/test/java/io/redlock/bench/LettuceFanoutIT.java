package io.redlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * The {@code lettuce-fanout} floor ({@link Adapters#lettuceFanout}), with the transport's
 * encoding ({@link TransportEncoding}), on real servers: a cycle sets the key on a majority,
 * refuses a second holder, and its release (compare-and-delete, sent as the transport sends a
 * script) deletes the key where it holds it.
 */
class LettuceFanoutIT {
  private static final Adapters.Retry RETRY =
      new Adapters.Retry(Duration.ofMillis(2), Duration.ofMillis(1), Duration.ofMillis(100));

  @Test
  void aCycleHoldsAMajorityAndItsReleaseDeletesTheKey() throws Exception {
    try (RedisServers servers = RedisServers.startFresh(3);
        LockUnderTest floor = Adapters.lettuceFanout("floor", servers.uris(), RETRY)) {
      for (int cycle = 1; cycle <= 2; cycle++) {
        try (AutoCloseable held = floor.lock("résumé")) {
          assertThat(held).as("cycle %d", cycle).isNotNull();
          assertThat(FencedFloorIT.values(servers, "résumé").stream().filter(Objects::nonNull))
              .as("nodes holding the key while held")
              .hasSizeGreaterThanOrEqualTo(2);
          assertThat(floor.lock("résumé")).as("a second holder while held").isNull();
        }
        assertThat(FencedFloorIT.values(servers, "résumé").stream().filter(Objects::isNull))
            .as("nodes without the key once released")
            .hasSizeGreaterThanOrEqualTo(2);
      }
    }
  }
}
