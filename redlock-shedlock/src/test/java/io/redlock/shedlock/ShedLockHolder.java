package io.redlock.shedlock;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import java.time.Duration;
import java.util.Arrays;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;

/**
 * A second JVM that takes a ShedLock lock with ShedLock's README values on a default {@code
 * Redlock} and keeps it, printing {@value #LOCKED} once it holds it, until it is killed: the
 * holder whose death {@link ShedLockReadmeValuesIT} watches.
 *
 * <p>Arguments: namespace, lock name, node timeout (ISO-8601, as the test's own {@code
 * Redlock}), then the node URIs.
 */
public final class ShedLockHolder {
  static final String LOCKED = "LOCKED";

  private ShedLockHolder() {}

  public static void main(String[] args) throws InterruptedException {
    String namespace = args[0];
    String name = args[1];
    Redlock redlock =
        Redlock.create(
            RedlockConfig.builder()
                .nodeTimeout(Duration.parse(args[2]))
                .nodes(Arrays.asList(args).subList(3, args.length))
                .build());
    RedlockLockProvider provider = new RedlockLockProvider(redlock, namespace);
    Duration fourteenMinutes = Duration.ofMinutes(14);
    provider
        .lock(new LockConfiguration(ClockProvider.now(), name, fourteenMinutes, fourteenMinutes))
        .orElseThrow(() -> new IllegalStateException(name + " is held elsewhere"));
    System.out.println(LOCKED);
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE); // the task "runs" until the test kills this JVM
  }
}
