package io.redlock.spring.boot;

import io.redlock.Lease;
import io.redlock.Redlock;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Component;

/** The docs' example of a bean that uses the auto-configured {@code Redlock}. */
// Shown in docs/integrations.md (Spring Boot); the test-only lines are left out there.
@Component
public class ReportJob {
  private final Redlock redlock;
  final AtomicInteger reports = new AtomicInteger(); // test-only

  public ReportJob(Redlock redlock) {
    this.redlock = redlock;
  }

  /** Writes the report unless another instance is writing it now. */
  public boolean runOnce() throws InterruptedException {
    Optional<Lease> lease = redlock.tryAcquire("report");
    if (lease.isEmpty()) {
      return false; // another instance holds the lock
    }
    try (Lease held = lease.get()) {
      writeReport();
      return true;
    }
  }

  private void writeReport() {
    reports.incrementAndGet(); // test-only
    // query, render and store the report
  }
}
