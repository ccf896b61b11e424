package io.redlock;

import io.redlock.internal.Printable;
import java.util.List;

/**
 * A lease is no longer valid: its validity ran out, an extension could not be confirmed by a
 * majority of the nodes, or a majority of the nodes no longer hold its token.
 *
 * <p>Once a lease is lost it is never valid again; work that needs mutual exclusion must stop.
 *
 * @since 0.1.0
 */
public final class LeaseLostException extends RedlockException {
  private static final long serialVersionUID = 1L;

  private final List<String> resources;
  private final LossCause lossCause;

  /** A lease lost because its validity ran out ({@link LossCause#EXPIRED}). */
  public LeaseLostException(List<String> resources, String reason) {
    this(resources, LossCause.EXPIRED, reason);
  }

  /**
   * A lease lost for {@code lossCause}, explained by {@code reason}.
   *
   * @since 0.1.0
   */
  public LeaseLostException(List<String> resources, LossCause lossCause, String reason) {
    super("lease on " + Printable.of(String.join(", ", resources)) + " is lost: " + reason);
    this.resources = List.copyOf(resources);
    this.lossCause = java.util.Objects.requireNonNull(lossCause, "lossCause");
  }

  /**
   * The same loss, thrown again: a new exception, with this thread's stack trace and the
   * first report of the loss as its cause.
   */
  public LeaseLostException(LeaseLostException first) {
    super(first.getMessage(), first);
    this.resources = first.resources;
    this.lossCause = first.lossCause;
  }

  /** The resources the lost lease covered. */
  public List<String> resources() {
    return resources;
  }

  /**
   * Why the lease was lost.
   *
   * @since 0.1.0
   */
  public LossCause lossCause() {
    return lossCause;
  }
}
