package io.redlock;

/**
 * Why a lease was lost: the value that logs, metrics and listeners read, never the message.
 *
 * @since 0.1.0
 */
public enum LossCause {
  /** Its validity ran out before an extension moved it (nobody extended it in time). */
  EXPIRED,
  /** An extension showed that a majority of the nodes no longer hold its token. */
  NOT_HELD,
  /** A majority confirmed an extension, but only after the new validity had run out. */
  CONFIRMED_TOO_LATE,
  /** Its validity ran out while extensions were not confirmed by a majority (nodes failing). */
  UNCONFIRMED,
  /** The {@link Redlock} was closed while the lease was held, and released it. */
  CLOSED
}
