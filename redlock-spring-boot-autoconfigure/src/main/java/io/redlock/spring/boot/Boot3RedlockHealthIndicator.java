package io.redlock.spring.boot;

import io.redlock.Redlock;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/** The health indicator on Spring Boot 3.5's actuator health API: {@link RedlockHealth} of the nodes' states. */
final class Boot3RedlockHealthIndicator implements HealthIndicator {
  private final Redlock redlock;
  private final String heldBackStatus;

  Boot3RedlockHealthIndicator(Redlock redlock, String heldBackStatus) {
    this.redlock = redlock;
    this.heldBackStatus = heldBackStatus;
  }

  @Override
  public Health health() {
    RedlockHealth health = RedlockHealth.of(redlock.nodeStates(), redlock.quorum());
    Health.Builder builder =
        switch (health.state()) {
          case UP -> Health.up();
          case HELD_BACK -> Health.status(heldBackStatus);
          case DOWN -> Health.down();
        };
    return builder.withDetails(health.details()).build();
  }
}
