package io.redlock.bench;

import java.time.Duration;

/**
 * One Java implementation as the harness measures it: in a JVM of its own ({@link
 * ForkedClient}, the default) or in the harness's JVM ({@link #inProcess}).
 */
interface Client extends AutoCloseable {

  /** The implementation's name, as in {@code --impls}. */
  String name();

  /** How many Redis nodes it locks on. */
  int nodes();

  /** Drives it for {@code warmup}, then measures it for {@code window}: see {@link Load}. */
  Figure measure(String prefix, int threads, boolean oneResource, Duration warmup, Duration window)
      throws InterruptedException;

  @Override
  void close();

  /** {@code impl} driven by {@link Load} in this JVM, metered by {@code cpu}. */
  static Client inProcess(LockUnderTest impl, CpuMeter cpu) {
    return new Client() {
      @Override
      public String name() {
        return impl.name();
      }

      @Override
      public int nodes() {
        return impl.nodes();
      }

      @Override
      public Figure measure(
          String prefix, int threads, boolean oneResource, Duration warmup, Duration window)
          throws InterruptedException {
        return Load.run(impl, prefix, threads, oneResource, warmup, window, cpu);
      }

      @Override
      public void close() {
        impl.close();
      }
    };
  }
}
