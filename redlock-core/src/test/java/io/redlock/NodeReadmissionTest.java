package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The re-admission rule, checked against its reason over every small cluster: it is safe
 * exactly when every majority (every set that can confirm a token) keeps a trusted node.
 */
class NodeReadmissionTest {

  @Test
  void readmissionIsAllowedExactlyWhenEveryMajorityKeepsATrustedNode() {
    for (int n = 1; n <= 9; n++) {
      int quorum = n / 2 + 1;
      for (int untrusted = 1; untrusted <= n; untrusted++) {
        // the untrusted nodes are the first ones: is some majority made only of them?
        boolean everyMajorityKeepsATrusted = true;
        for (List<Integer> majority : subsets(n, quorum)) {
          if (majority.get(majority.size() - 1) < untrusted) {
            everyMajorityKeepsATrusted = false;
          }
        }
        assertThat(NodeReadmission.enoughTrusted(n, quorum, untrusted))
            .as("n=%d untrusted=%d", n, untrusted)
            .isEqualTo(everyMajorityKeepsATrusted);
      }
    }
  }

  private static List<List<Integer>> subsets(int n, int size) {
    List<List<Integer>> all = new ArrayList<>();
    collect(0, n, size, new ArrayList<>(), all);
    return all;
  }

  private static void collect(
      int from, int n, int size, List<Integer> now, List<List<Integer>> all) {
    if (now.size() == size) {
      all.add(List.copyOf(now));
      return;
    }
    for (int i = from; i < n; i++) {
      now.add(i);
      collect(i + 1, n, size, now, all);
      now.remove(now.size() - 1);
    }
  }
}
