package io.redlock.spring.boot;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code management.health.redlock.*} properties of the {@code redlock} health indicator,
 * read when Spring Boot's health types are on the class path.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("management.health.redlock")
public class RedlockHealthProperties {
  /** The default of {@code management.health.redlock.held-back-status}: {@value}. */
  public static final String DEFAULT_HELD_BACK_STATUS = "UP";

  /**
   * Whether to make the redlock health indicator. Unset by default: then
   * management.health.defaults.enabled decides, as for Spring Boot's own indicators.
   */
  private Boolean enabled;

  /**
   * The health status reported while a majority of the nodes answer but the restart guard
   * holds back so many of them, after a restart or a loss of data, that no quorum counts: UP
   * (the default, with the details saying that locks are held back), OUT_OF_SERVICE or DOWN
   * (both of which Spring Boot maps to HTTP 503, taking the application out of a load
   * balancer's rotation), or a status code of your own.
   */
  private String heldBackStatus = DEFAULT_HELD_BACK_STATUS;

  /** Used by Spring. */
  public RedlockHealthProperties() {}

  /** Whether the indicator is made; {@code null} when unset (the defaults decide). */
  public Boolean getEnabled() {
    return enabled;
  }

  /** Sets {@code management.health.redlock.enabled}. */
  public void setEnabled(Boolean enabled) {
    this.enabled = enabled;
  }

  /** The status reported while restarted nodes are held back below the quorum. */
  public String getHeldBackStatus() {
    return heldBackStatus;
  }

  /**
   * Sets {@code management.health.redlock.held-back-status}.
   *
   * @throws IllegalArgumentException if it is blank
   */
  public void setHeldBackStatus(String heldBackStatus) {
    if (heldBackStatus == null || heldBackStatus.isBlank()) {
      throw new IllegalArgumentException(
          "management.health.redlock.held-back-status is empty; give a health status such as"
              + " UP, OUT_OF_SERVICE or DOWN");
    }
    this.heldBackStatus = heldBackStatus.strip();
  }
}
