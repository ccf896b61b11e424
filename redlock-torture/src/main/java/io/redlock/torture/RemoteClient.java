package io.redlock.torture;

import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A client that runs in a {@link ClientProcess}: pauses go to the process's standard input,
 * and what it holds is learned from the process's standard output. Thread-safe.
 */
final class RemoteClient implements ClientHandle {
  private final String name;
  private final PrintStream commands;
  private final AtomicReference<String> holding = new AtomicReference<>();

  RemoteClient(String name, PrintStream commands) {
    this.name = name;
    this.commands = commands;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public void requestPause() {
    synchronized (commands) {
      commands.println("pause " + name);
      commands.flush();
    }
  }

  @Override
  public String holding() {
    return holding.get();
  }

  void holds(String resource) {
    holding.set(resource);
  }
}
