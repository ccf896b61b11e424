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
 * overwrites the successor's: each committed update adds exactly one to the number, and
 * {@link #lostUpdates()} counts the difference. This is what a database does with
 * {@code UPDATE ... WHERE fence < ?} on the read and {@code WHERE fence = ?} on the write.
 *
 * <p>Thread-safe.
 */
final class FencedStore {
  private record Cell(long fence, long value, long commits) {}

  private static final Cell EMPTY = new Cell(0, 0, 0);
  private final Map<String, Cell> cells = new HashMap<>();
  private final List<TortureResult.Refusal> refusals = new ArrayList<>();

  /**
   * Reads {@code resource}'s number for {@code client}, the holder of {@code token}; empty,
   * and the refusal recorded, if a token as large was seen before.
   */
  synchronized OptionalLong begin(String client, String resource, long token) {
    Cell cell = cells.getOrDefault(resource, EMPTY);
    if (token <= cell.fence()) {
      refusals.add(
          new TortureResult.Refusal(System.nanoTime(), client, resource, token, cell.fence()));
      return OptionalLong.empty();
    }
    cells.put(resource, new Cell(token, cell.value(), cell.commits()));
    return OptionalLong.of(cell.value());
  }

  /** Writes {@code value} if the holder of {@code token} is the last to have begun. */
  synchronized boolean commit(String client, String resource, long token, long value) {
    Cell cell = cells.getOrDefault(resource, EMPTY);
    if (token != cell.fence()) {
      refusals.add(
          new TortureResult.Refusal(System.nanoTime(), client, resource, token, cell.fence()));
      return false;
    }
    cells.put(resource, new Cell(token, value, cell.commits() + 1));
    return true;
  }

  /** Every read and write refused, in the order they came. */
  synchronized List<TortureResult.Refusal> refusals() {
    return List.copyOf(refusals);
  }

  /** Commits whose update is not in the numbers: 0 unless a stale write got through. */
  synchronized long lostUpdates() {
    long lost = 0;
    for (Cell cell : cells.values()) {
      lost += cell.commits() - cell.value();
    }
    return lost;
  }
}
