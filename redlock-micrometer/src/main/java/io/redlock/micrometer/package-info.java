/**
 * Micrometer meters and observations for Redlock: {@link io.redlock.micrometer.RedlockMetrics}.
 *
 * @since 0.1.0
 */
package io.redlock.micrometer;
