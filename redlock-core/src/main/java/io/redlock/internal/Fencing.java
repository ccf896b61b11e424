package io.redlock.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * The fencing counters and the pure choice of a fencing token (DESIGN §3, fencing).
 *
 * <p>Each node keeps, per resource, a counter without expiry at
 * {@code keyPrefix + "__redlock_fence__:" + resource}. A fenced attempt reads the counters
 * atomically with its {@code SET NX} on every node; the token is one more than the largest
 * counter among the nodes that granted and whose counters are trusted, provided those nodes
 * are a majority. The attempt then raises the counters to the token on a majority of trusted
 * nodes, each only while it still holds the lock there, before the lease is handed out.
 *
 * <p>Why the token grows: a later holder's trusted grants form a majority, which shares a
 * node with the trusted majority that confirmed an earlier token. On that node the earlier
 * holder raised the counter while its lock key was there, and the later holder's
 * {@code SET NX} found the key gone, so it read the raised counter. A trusted node is one whose
 * state is known complete (see {@link RestartGuard#trustsCounters}); a node that lost its
 * counters is not trusted again in its current process. The argument in full is in
 * {@code docs/safety.md}.
 */
public final class Fencing {
  /** What a counter key adds to the key prefix, before the resource name: {@value}. */
  public static final String COUNTER_KEYS = "__redlock_fence__:";

  /** Resource names may not begin with this: the library's own keys do. {@value} */
  public static final String RESERVED = "__redlock";

  private Fencing() {}

  /** The counter keys of {@code resources}, in their order. */
  static List<String> counterKeys(String keyPrefix, List<String> resources) {
    String counters = keyPrefix.concat(COUNTER_KEYS);
    List<String> keys = new ArrayList<>(resources.size());
    for (String resource : resources) {
      keys.add(counters.concat(resource)); // one exact-sized copy per acquisition's key
    }
    return List.copyOf(keys);
  }

  /**
   * The fencing token of an attempt, or -1 when it cannot have one yet.
   *
   * @param quorum how many nodes make a majority
   * @param counters per node, the largest counter it answered with its grant
   * @param trustedGrant per node, whether it granted and its counters are trusted
   * @return one more than the largest counter of the trusted grants, if they are at least
   *     {@code quorum}; else -1
   */
  static long token(int quorum, long[] counters, boolean[] trustedGrant) {
    int trusted = 0;
    long max = 0;
    for (int i = 0; i < counters.length; i++) {
      if (trustedGrant[i]) {
        trusted++;
        max = Math.max(max, counters[i]);
      }
    }
    return trusted >= quorum ? max + 1 : -1;
  }
}
