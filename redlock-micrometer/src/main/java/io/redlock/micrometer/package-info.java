/**
 * Micrometer meters and observations for Redlock: {@link io.redlock.micrometer.RedlockMetrics}.
 *
 * @since 0.2.0
 */
package io.redlock.micrometer;
