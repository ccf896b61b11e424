package io.redlock;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * One node's answer to an administrative call ({@link Redlock#init}, {@link Redlock#readmit}):
 * its value, or why there is none, in one line for people.
 *
 * <p>An immutable value; thread-safe.
 */
record NodeAnswer<T>(T value, String error) {

  /** Makes the call; a call that throws is a failed stage, like one that fails later. */
  static <T> CompletableFuture<T> call(Supplier<CompletionStage<T>> call) {
    try {
      return call.get().toCompletableFuture();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The answer of {@code future} within {@code waitNanos}. */
  static <T> NodeAnswer<T> within(CompletableFuture<T> future, long waitNanos) {
    try {
      return new NodeAnswer<>(future.get(waitNanos, TimeUnit.NANOSECONDS), null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new NodeAnswer<>(null, "interrupted");
    } catch (TimeoutException e) {
      return new NodeAnswer<>(null, "no answer within the connect timeout");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      String message =
          cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
      return new NodeAnswer<>(null, message.replaceAll("\\s+", " "));
    }
  }
}
