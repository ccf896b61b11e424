/**
 * Redlock: a distributed lock over N independent Redis masters.
 *
 * <p>{@code io.redlock} is the API, {@code io.redlock.spi} is what a transport implements;
 * {@code io.redlock.internal} is not exported and may change in any release.
 */
module io.redlock {
  requires org.slf4j;

  exports io.redlock;
  exports io.redlock.spi;

  uses io.redlock.spi.NodeTransport;
}
