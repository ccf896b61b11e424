package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.NodeState;
import io.redlock.NodeState.Status;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Redlock#nodeStates()} over real redis-server processes and the Lettuce transport: a
 * stopped node is unreachable from its lost connection, a paused one (its connection open,
 * nothing answered) once the restart guard's probe times out, and both come back; with the guard
 * off too, where nothing else would probe them.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NodeStatesIT {
  private RedisServers servers;

  @BeforeEach
  void start() {
    servers = RedisServers.startFresh(3);
  }

  @AfterEach
  void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  private NodeState state(Redlock redlock, int i) {
    return redlock.nodeStates().get(i);
  }

  @Test
  void aPausedNodeIsUnreachableOnceItsProbeTimesOutAndAStoppedOneAtOnce() throws Exception {
    try (Redlock redlock = Redlock.create(RedlockConfig.builder().nodes(servers.uris()).build())) {
      assertThat(redlock.nodeStates()).extracting(NodeState::status).containsOnly(Status.COUNTED);
      assertThat(state(redlock, 0).node()).isEqualTo(servers.address(0));

      servers.pause(0);
      try {
        Timing.await("paused node 0 unreachable", () -> !state(redlock, 0).reachable());
        assertThat(state(redlock, 0).reason()).startsWith("no answer to the restart guard's probe");
      } finally {
        servers.resume(0);
      }
      Timing.await("node 0 counted again", () -> state(redlock, 0).status() == Status.COUNTED);

      servers.stop(1);
      Timing.await("stopped node 1 unreachable", () -> !state(redlock, 1).reachable());
      assertThat(state(redlock, 1).counted()).isFalse();
      assertThat(redlock.nodeStates().get(2).status()).isEqualTo(Status.COUNTED);
    }
  }

  @Test
  void withTheGuardOffAStoppedNodeIsSeenToComeBack() throws Exception {
    RedlockConfig config =
        RedlockConfig.builder().nodes(servers.uris()).restartGuard(false).build();
    try (Redlock redlock = Redlock.create(config)) {
      servers.stop(2);
      Timing.await("node 2 unreachable", () -> state(redlock, 2).status() == Status.UNREACHABLE);
      servers.restart(2);
      Timing.await("node 2 back", () -> state(redlock, 2).status() == Status.COUNTED);
      assertThat(state(redlock, 2).reachable()).isTrue();
    }
  }
}
