package io.redlock.torture;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The resource a fenced torture run protects: per resource, a number that every lease reads,
 * works on, and writes back one larger, and the largest fencing token it has seen.
 *
 * <p>A holder {@linkplain #begin begins} with its token, which must be larger than every token
 * seen before (the read records it), and {@linkplain #commit commits} with the same token,
 * which only succeeds if no later holder has begun since. A holder paused past its lease is
 * refused at whichever step comes after its successor's read, so its stale value never
 * overwrites the successor's. This is what a database does with {@code UPDATE ... WHERE fence
 * < ?} on the read and {@code WHERE fence = ?} on the write.
 *
 * <p>The store does not judge itself: it logs every read and write in the order it decided
 * them ({@link #accesses()}), and {@link FencingChecker} decides from that log and the leases'
 * grant order, not from the tokens, whether the store refused exactly what it should have.
 *
 * <p>Thread-safe.
 */
final class FencedStore {
  private record Cell(long fence, long value) {}

  /**
   * One read or write as the store decided it.
   *
   * @param nanos when, on the runner's monotonic clock
   * @param client the client that tried
   * @param resource what it tried to read or write
   * @param lease the token of the client's lease ({@link io.redlock.Lease#token()})
   * @param token its fencing token
   * @param seen the largest fencing token the store had seen before this access
   * @param write a write (commit) rather than a read (begin)
   * @param accepted whether the store took it
   */
  record Access(
      long nanos,
      String client,
      String resource,
      String lease,
      long token,
      long seen,
      boolean write,
      boolean accepted) {}

  private static final Cell EMPTY = new Cell(0, 0);
  private final Map<String, Cell> cells = new HashMap<>();
  private final List<Access> accesses = new ArrayList<>();

  /**
   * Reads {@code resource}'s number for {@code client}, the holder of {@code lease} with
   * fencing token {@code token}; empty, and the refusal recorded, if a token as large was seen
   * before.
   */
  synchronized OptionalLong begin(String client, String resource, String lease, long token) {
    Cell cell = cells.getOrDefault(resource, EMPTY);
    boolean accepted = token > cell.fence();
    accesses.add(
        new Access(
            System.nanoTime(), client, resource, lease, token, cell.fence(), false, accepted));
    if (!accepted) {
      return OptionalLong.empty();
    }
    cells.put(resource, new Cell(token, cell.value()));
    return OptionalLong.of(cell.value());
  }

  /** Writes {@code value} if the holder of {@code token} is the last to have begun. */
  synchronized boolean commit(
      String client, String resource, String lease, long token, long value) {
    Cell cell = cells.getOrDefault(resource, EMPTY);
    boolean accepted = token == cell.fence();
    accesses.add(
        new Access(
            System.nanoTime(), client, resource, lease, token, cell.fence(), true, accepted));
    if (accepted) {
      cells.put(resource, new Cell(token, value));
    }
    return accepted;
  }

  /** Every read and write, in the order the store decided them. */
  synchronized List<Access> accesses() {
    return List.copyOf(accesses);
  }

  /** Every resource's number: the sum of the updates it kept. */
  synchronized long total() {
    long total = 0;
    for (Cell cell : cells.values()) {
      total += cell.value();
    }
    return total;
  }
}
