package io.redlock.spring.boot;

import io.redlock.Redlock;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/** The health indicator on Spring Boot 4.0's spring-boot-health API. */
final class Boot4RedlockHealthIndicator implements HealthIndicator {
  private final Redlock redlock;
  private final RedlockNodeStatus status;

  Boot4RedlockHealthIndicator(Redlock redlock, RedlockNodeStatus status) {
    this.redlock = redlock;
    this.status = status;
  }

  @Override
  public Health health() {
    RedlockNodeStatus.Details details = status.details(redlock);
    return (details.up() ? Health.up() : Health.down()).withDetails(details.map()).build();
  }
}
