package io.redlock.spring.boot;

import java.util.Locale;
import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;

/**
 * Masks the password in the node URIs of {@code redlock.nodes} wherever the actuator shows a
 * property's value: in {@code /actuator/configprops} (both the bean's properties, which
 * {@link RedlockProperties#getNodes} returns as written, and the inputs) and in {@code
 * /actuator/env}. It applies when the endpoints show values at all ({@code show-values}
 * {@code ALWAYS} or {@code WHEN_AUTHORIZED}); the rest of the value is left readable. The
 * value of {@code redlock.password} (also written {@code REDLOCK_PASSWORD}) is masked whole:
 * Spring Boot 3 and 4 mask no key by its name once values are shown.
 */
final class RedlockNodesSanitizingFunction implements SanitizingFunction {

  @Override
  public SanitizableData apply(SanitizableData data) {
    Object value = data.getValue();
    if (value != null && isPassword(data.getKey())) {
      return data.withValue(SanitizableData.SANITIZED_VALUE);
    }
    if (!(value instanceof CharSequence) || !isNodes(data.getKey())) {
      return data;
    }
    String[] nodes = value.toString().split(",", -1);
    StringBuilder masked = new StringBuilder();
    for (int i = 0; i < nodes.length; i++) {
      if (i > 0) {
        masked.append(',');
      }
      masked.append(RedlockProperties.masked(nodes[i]));
    }
    return data.withValue(masked.toString());
  }

  /** {@code redlock.password}, or {@code REDLOCK_PASSWORD}. */
  private static boolean isPassword(String key) {
    return key != null && key.toLowerCase(Locale.ROOT).replace('_', '.').equals("redlock.password");
  }

  /** {@code redlock.nodes}, {@code redlock.nodes[0]}, or {@code REDLOCK_NODES_0_}. */
  private static boolean isNodes(String key) {
    if (key == null) {
      return false;
    }
    String k = key.toLowerCase(Locale.ROOT).replace('_', '.');
    return k.equals("redlock.nodes")
        || k.startsWith("redlock.nodes[")
        || k.startsWith("redlock.nodes.");
  }
}
