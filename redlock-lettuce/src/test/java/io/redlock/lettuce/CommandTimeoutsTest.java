package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolKeyword;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Which commands Lettuce times out: none of a round's, every other one. */
class CommandTimeoutsTest {
  private final CommandTimeouts timeouts = new CommandTimeouts(Duration.ofMillis(50));

  private long timeoutOf(ProtocolKeyword type) {
    return timeouts.getTimeout(new Command<String, String, Object>(type, null));
  }

  @Test
  void theRequestsOfARoundHaveNoLettuceTimeout() {
    assertThat(timeoutOf(RoundCommand.EVAL)).isZero();
    assertThat(timeoutOf(RoundCommand.EVALSHA)).isZero();
    assertThat(timeoutOf(CommandType.SET)).isZero();
  }

  @Test
  void commandsThatBelongToNoRoundKeepTheDeliveryTimeout() {
    long second = Duration.ofSeconds(1).toNanos();
    assertThat(timeoutOf(CommandType.EVAL)).isEqualTo(second); // probes, register, init
    assertThat(timeoutOf(CommandType.INFO)).isEqualTo(second);
    assertThat(timeoutOf(CommandType.GET)).isEqualTo(second);
  }

  @Test
  void roundCommandsAreWrittenAsTheCommandsTheyStandFor() {
    assertThat(new String(RoundCommand.EVAL.getBytes(), java.nio.charset.StandardCharsets.US_ASCII))
        .isEqualTo("EVAL");
    assertThat(RoundCommand.EVALSHA.name()).isEqualTo("EVALSHA");
  }
}
