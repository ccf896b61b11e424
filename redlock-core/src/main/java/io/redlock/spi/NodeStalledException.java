package io.redlock.spi;

/**
 * A request a transport did not send because its node is not keeping up: it stopped answering,
 * or the requests already waiting on it reached the transport's bound. The algorithm records
 * the vote as {@link io.redlock.NodeOutcome.Vote#STALLED}, by type, whatever the message says;
 * the message says which of the two and the figures, for people.
 *
 * <p>A transport fails the request's future with it at once: nothing waits on a stalled node,
 * and nothing more is held in memory for it. Without a stack trace: it is an outcome, not a
 * fault, and there may be many.
 *
 * @since 0.1.0
 */
public final class NodeStalledException extends Exception {
  private static final long serialVersionUID = 1L;

  /**
   * @param message why the request was not sent (for people), such as {@code "not answering:
   *     3 requests in a row got no answer"}
   */
  public NodeStalledException(String message) {
    super(message, null, false, false);
  }
}
