package io.redlock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.internal.Fencing;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * The fenced floor of the benchmark ({@link FencedFloor}) does what its figures are read as:
 * this library's fenced cycle, scripts and all, on real servers. Each cycle takes a token above
 * the last one and writes it to a majority; the restart guard's check in the lock script
 * refuses nodes whose record does not admit their process, unless the floor skips it. Rounds
 * are decided at a majority, so each check counts the nodes that agree: the third may not have
 * run a request yet when the test reads it.
 */
class FencedFloorIT {
  private static final Adapters.Retry RETRY =
      new Adapters.Retry(Duration.ofMillis(2), Duration.ofMillis(1), Duration.ofMillis(300));

  private static final String RESOURCE = "floor";
  private static final String COUNTER = Fencing.COUNTER_KEYS + RESOURCE;

  @Test
  void eachCycleWritesTheNextTokenToAMajority() throws Exception {
    try (RedisServers servers = RedisServers.startFresh(3);
        LockUnderTest floor = FencedFloor.create("floor", servers.uris(), RETRY, true)) {
      for (int cycle = 1; cycle <= 3; cycle++) {
        try (AutoCloseable held = floor.lock(RESOURCE)) {
          assertThat(held).as("cycle %d", cycle).isNotNull();
          assertThat(values(servers, RESOURCE).stream().filter(Objects::nonNull))
              .as("nodes holding the lock key while held")
              .hasSizeGreaterThanOrEqualTo(2);
        }
        assertThat(values(servers, COUNTER).stream().filter(String.valueOf(cycle)::equals))
            .as("nodes whose counter holds token %d", cycle)
            .hasSizeGreaterThanOrEqualTo(2);
      }
      assertThat(values(servers, RESOURCE).stream().filter(Objects::isNull))
          .as("nodes without the lock key once released")
          .hasSizeGreaterThanOrEqualTo(2);
    }
  }

  @Test
  void theCheckRefusesNodesWhoseRecordDoesNotAdmitThem() throws Exception {
    // Never declared fresh: no node's record admits its process.
    try (RedisServers servers = RedisServers.start(3)) {
      try (LockUnderTest floor = FencedFloor.create("floor", servers.uris(), RETRY, true)) {
        assertThatThrownBy(() -> floor.lock(RESOURCE))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("check refused a majority");
      }
      assertThat(values(servers, COUNTER)).as("no token was written").containsOnlyNulls();
      assertThat(values(servers, RESOURCE).stream().filter(Objects::isNull))
          .as("nodes released before the failure was thrown")
          .hasSizeGreaterThanOrEqualTo(2);
      try (LockUnderTest unchecked = FencedFloor.create("floor", servers.uris(), RETRY, false);
          AutoCloseable held = unchecked.lock(RESOURCE)) {
        assertThat(held).isNotNull();
        assertThat(values(servers, COUNTER).stream().filter("1"::equals))
            .hasSizeGreaterThanOrEqualTo(2);
      }
    }
  }

  /** Each server's value of {@code key}, null where it has none. */
  static List<String> values(RedisServers servers, String key) {
    List<String> values = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      Object value = servers.command(i, "GET", key);
      values.add(value == null ? null : String.valueOf(value));
    }
    return values;
  }
}
