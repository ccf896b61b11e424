package io.redlock.spring.boot;

import java.util.List;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when {@code redlock.nodes} names at least one node, in any form Boot binds. */
final class OnRedlockNodesCondition extends SpringBootCondition {

  @Override
  public ConditionOutcome getMatchOutcome(
      ConditionContext context, AnnotatedTypeMetadata metadata) {
    List<String> nodes =
        Binder.get(context.getEnvironment())
            .bind("redlock.nodes", Bindable.listOf(String.class))
            .orElse(List.of());
    return nodes.isEmpty()
        ? ConditionOutcome.noMatch("redlock.nodes is not set")
        : ConditionOutcome.match("redlock.nodes names " + nodes.size() + " node(s)");
  }
}
