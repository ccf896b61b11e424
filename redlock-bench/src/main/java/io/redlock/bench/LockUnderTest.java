package io.redlock.bench;

/**
 * One lock implementation as the load harness drives it: acquire a resource (waiting while
 * another holder has it), then release it by closing what was returned.
 */
interface LockUnderTest extends AutoCloseable {

  /** Short name used in tables and the chart, e.g. {@code redlock}. */
  String name();

  /** How many Redis nodes it locks on. */
  int nodes();

  /**
   * Acquires {@code resource}, waiting up to the implementation's retry budget if it is held.
   *
   * @return the held lock, released by {@link AutoCloseable#close()}; {@code null} if it could
   *     not be acquired within the budget
   */
  AutoCloseable lock(String resource) throws Exception;

  @Override
  void close();
}
