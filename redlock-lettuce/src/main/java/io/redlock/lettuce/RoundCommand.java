package io.redlock.lettuce;

import io.lettuce.core.protocol.ProtocolKeyword;
import java.nio.charset.StandardCharsets;

/**
 * {@code EVAL} and {@code EVALSHA} as the requests of a round send them (locks of several keys,
 * fenced locks and their confirmation, extensions, releases): on the wire the same commands as
 * Lettuce's own, but a type of their own, so that {@link CommandTimeouts} can leave them
 * without a Lettuce timeout while the scripts that belong to no round (the restart guard's,
 * {@code init}'s) keep theirs.
 *
 * <p>Lettuce 6 asks a keyword for {@code name()}, Lettuce 7 for {@code toString()}: an enum
 * answers both with the command's name.
 */
enum RoundCommand implements ProtocolKeyword {
  EVAL,
  EVALSHA;

  private final byte[] bytes = name().getBytes(StandardCharsets.US_ASCII);

  @Override
  public byte[] getBytes() {
    return bytes;
  }
}
