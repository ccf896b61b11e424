package io.redlock.spring.boot;

import io.redlock.shedlock.RedlockLockProvider;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.scheduling.annotation.Scheduled;

/** The docs' ShedLock task that reads its fencing token. */
// Shown in docs/integrations.md (ShedLock); the test-only lines are left out there.
public class NightlyExport {
  private final List<Long> tokens = new CopyOnWriteArrayList<>(); // test-only

  public List<Long> tokens() { // test-only: read through ShedLock's proxy
    return tokens; // test-only
  } // test-only

  @Scheduled(cron = "0 0 2 * * *")
  @SchedulerLock(name = "nightly-export", lockAtMostFor = "14m")
  public void export() {
    long token = RedlockLockProvider.currentLease().orElseThrow().fencingToken();
    exportRows(token); // each write carries the token; the store refuses a lower one
  }

  private void exportRows(long token) {
    tokens.add(token); // test-only
  }
}
