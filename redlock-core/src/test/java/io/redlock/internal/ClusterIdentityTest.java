package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterIdentityTest {
  private static final ClusterIdentity A3 = new ClusterIdentity("aaaaaaaaaaaa", 3);
  private static final ClusterIdentity B3 = new ClusterIdentity("bbbbbbbbbbbb", 3);

  private static List<String> names(int n) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      names.add("n" + i + ":6380");
    }
    return names;
  }

  private static String conflict(int index, ClusterIdentity... identities) {
    return ClusterIdentity.conflict(index, Arrays.asList(identities), names(identities.length));
  }

  @Test
  void readsWhatItWritesAndNothingElse() {
    ClusterIdentity created = ClusterIdentity.create(5);
    assertThat(created.id()).matches("[0-9a-f]{12}");
    assertThat(ClusterIdentity.parse(created.format())).isEqualTo(created);
    assertThat(ClusterIdentity.create(5)).isNotEqualTo(created);
    assertThat(ClusterIdentity.parse(null)).isNull();
    assertThat(ClusterIdentity.parse("-")).isNull();
    assertThat(ClusterIdentity.parse("aaaaaaaaaaaa/0")).isNull();
    assertThat(ClusterIdentity.parse("aaaaaaaaaaaa/x")).isNull();
    assertThat(ClusterIdentity.parse("AAAAAAAAAAAA/3")).isNull();
    assertThat(ClusterIdentity.parse("aaaa/3")).isNull();
  }

  @Test
  void aClientThatListsTheDeclaredNodesAgrees() {
    for (int i = 0; i < 3; i++) {
      assertThat(conflict(i, A3, A3, A3)).isNull();
    }
  }

  @Test
  void nodesWithoutAnIdentityAreNotJudged() {
    assertThat(conflict(0, null, null, null)).isNull();
    assertThat(conflict(1, A3, null, null)).isNull();
    assertThat(conflict(0, A3, null, null)).isNull();
  }

  @Test
  void aClientWithAnotherNodeCountIsRefusedWithBothCountsNamed() {
    // Two nodes of a cluster declared with three: the client's majority (2) is not the
    // cluster's (2 of 3), and another client with all three can hold the same lock.
    String why = conflict(0, A3, A3);
    assertThat(why).contains("cluster of 3 nodes", "aaaaaaaaaaaa", "this client lists 2");
    ClusterIdentity[] five = {A3, A3, A3, null, null};
    for (int i = 0; i < 3; i++) {
      assertThat(conflict(i, five)).contains("cluster of 3 nodes", "this client lists 5");
    }
    assertThat(conflict(3, five)).isNull(); // the new nodes carry nothing to judge
  }

  @Test
  void nodesOfAnotherClusterAreRefusedAndTheMostCommonIdentityKept() {
    assertThat(conflict(0, A3, A3, B3)).isNull();
    assertThat(conflict(1, A3, A3, B3)).isNull();
    assertThat(conflict(2, A3, A3, B3))
        .contains("belongs to cluster bbbbbbbbbbbb", "n0:6380 (cluster aaaaaaaaaaaa)", "mixes");
  }

  @Test
  void onATieEveryNodeWithAnIdentityIsRefused() {
    ClusterIdentity a4 = new ClusterIdentity("aaaaaaaaaaaa", 4);
    ClusterIdentity b4 = new ClusterIdentity("bbbbbbbbbbbb", 4);
    for (int i = 0; i < 4; i++) {
      assertThat(conflict(i, a4, a4, b4, b4)).as("node %d", i).contains("mixes clusters");
    }
    assertThat(conflict(0, a4, b4, null, null)).contains("mixes clusters");
  }
}
