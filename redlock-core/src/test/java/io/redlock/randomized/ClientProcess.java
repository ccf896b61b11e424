package io.redlock.randomized;

import java.util.ArrayDeque;

/**
 * One simulated client process, which can be stopped as by a long GC pause or {@code SIGSTOP}.
 *
 * <p>Everything the process does goes through {@link #run}: its timer tasks, the replies and
 * disconnect events its connections deliver, its own work. While paused, that is held back
 * and then run in arrival order at {@link #resume()}. The process's clock keeps running.
 */
final class ClientProcess {
  private final ArrayDeque<Runnable> held = new ArrayDeque<>();
  private boolean paused;

  /** Runs {@code action} now, or at resume if the process is paused. */
  void run(Runnable action) {
    if (paused) {
      held.add(action);
    } else {
      action.run();
    }
  }

  void pause() {
    paused = true;
  }

  void resume() {
    paused = false;
    Runnable next;
    while (!paused && (next = held.poll()) != null) {
      next.run();
    }
  }

  boolean isPaused() {
    return paused;
  }
}
