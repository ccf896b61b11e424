package io.redlock.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.torture.FaultPlan.Action;
import io.redlock.torture.FaultPlan.Step;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fault plans: what a step accepts, and that a script is fixed once made. */
class FaultPlanTest {

  @Test
  void aStepIsAtAShareOfTheRunFromZeroToOneOnANodeCountedFromZero() {
    assertThat(new Step(0, Action.KILL, 0).at()).isZero();
    assertThat(new Step(1, Action.RESTART_EMPTY, 4).node()).isEqualTo(4);
    for (double at : new double[] {-0.01, 1.01, Double.NaN, Double.POSITIVE_INFINITY}) {
      assertThatThrownBy(() -> new Step(at, Action.PAUSE, 0))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("step PAUSE at " + at)
          .hasMessageContaining("at must be from 0 to 1");
    }
    assertThatThrownBy(() -> new Step(0.5, Action.RESUME, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("on node -1")
        .hasMessageContaining("node 0 or more");
    assertThatThrownBy(() -> new Step(0.5, null, 0))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("action");
  }

  @Test
  void aScriptKeepsItsStepsInOrderAndIsNotChangedByItsCaller() {
    List<Step> steps = new ArrayList<>();
    steps.add(new Step(0.2, Action.PAUSE, 1));
    steps.add(new Step(0.1, Action.KILL, 0));
    FaultPlan plan = FaultPlan.script(steps);
    steps.clear();

    assertThat(plan).isInstanceOf(FaultPlan.Script.class);
    List<Step> kept = ((FaultPlan.Script) plan).steps();
    assertThat(kept).containsExactly(new Step(0.2, Action.PAUSE, 1), new Step(0.1, Action.KILL, 0));
    assertThatThrownBy(() -> kept.add(new Step(0.3, Action.RESUME, 1)))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void theRandomPlanIsOneValue() {
    assertThat(FaultPlan.random())
        .isSameAs(FaultPlan.random())
        .isNotInstanceOf(FaultPlan.Script.class);
  }

  @Test
  void aRunRefusesAStepOnANodeItDoesNotHaveBeforeStartingAnything() {
    TortureOptions options = TortureOptions.builder().nodes(3).build();
    FaultPlan beyond = FaultPlan.script(List.of(new Step(0.5, Action.KILL, 3)));

    assertThatThrownBy(() -> TortureRun.run(options, beyond, TortureListener.NONE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("names a node beyond the 3 of the run");
  }
}
