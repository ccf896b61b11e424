package io.redlock.internal;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** What the engine needs around {@link java.util.concurrent.CompletableFuture}s. */
public final class Futures {
  private Futures() {}

  /**
   * The failure a future's wrappers stand for: {@code error} without the
   * {@link CompletionException} and {@link ExecutionException} layers that futures add.
   */
  public static Throwable unwrap(Throwable error) {
    Throwable cause = error;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }
}
