package io.redlock.spring.boot;

import io.redlock.Redlock;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/** The health indicator on Spring Boot 3.5's actuator health API. */
final class Boot3RedlockHealthIndicator implements HealthIndicator {
  private final Redlock redlock;
  private final RedlockNodeStatus status;

  Boot3RedlockHealthIndicator(Redlock redlock, RedlockNodeStatus status) {
    this.redlock = redlock;
    this.status = status;
  }

  @Override
  public Health health() {
    RedlockNodeStatus.Details details = status.details(redlock);
    return (details.up() ? Health.up() : Health.down()).withDetails(details.map()).build();
  }
}
