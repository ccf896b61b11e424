package io.redlock.spring.boot;

import io.redlock.Lease;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.stereotype.Service;

/** The docs' example of a locked method. */
// Shown in docs/integrations.md (Spring Boot); the test-only lines are left out there.
@Service
public class OrderService {
  private final List<Lease> shipments = new CopyOnWriteArrayList<>(); // test-only

  public List<Lease> shipments() { // test-only: read through the proxy, whose fields are unset
    return shipments; // test-only
  } // test-only

  @RedlockLocked(key = "'order:' + #order.id", waitFor = "5s")
  public void ship(Order order) {
    long token = RedlockContext.currentLease().orElseThrow().fencingToken();
    shipments.add(RedlockContext.currentLease().orElseThrow()); // test-only
    writeShipment(order, token);
  }

  private void writeShipment(Order order, long token) {
    // store the shipment where a write with a lower token than the last one is refused
  }
}
