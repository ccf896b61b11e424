package io.redlock.torture;

import io.redlock.Redlock;
import io.redlock.testkit.History;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code main} of a torture client process: a few {@link TortureClient}s, each with its
 * own {@link Redlock}, run for the given time; the history goes to a file for the run to
 * merge. Standard input takes {@code pause NAME} requests from the nemesis; standard output
 * tells it who holds what ({@code H NAME RESOURCE}, {@code R NAME}), twice a second the
 * totals so far ({@code P ATTEMPTS ACQUISITIONS}), and ends with {@code DONE}.
 *
 * <p>Arguments: {@code historyFile durationMillis ttlMillis workMillis restartGuard
 * pauseBetweenCheckAndWrite seed resource,resource,...}; the clients and their nodes, which
 * carry the servers' password, come in the environment variable {@value #NODES_ENV}
 * ({@code name=uri,uri,... name=...}), never on the command line.
 */
public final class ClientProcess {
  /** The environment variable with each client's name and node URIs. */
  static final String NODES_ENV = "REDLOCK_TORTURE_CLIENTS";

  private ClientProcess() {}

  public static void main(String[] args) throws Exception {
    Path historyFile = Path.of(args[0]);
    TortureOptions options =
        TortureOptions.builder()
            .duration(Duration.ofMillis(Long.parseLong(args[1])))
            .ttl(Duration.ofMillis(Long.parseLong(args[2])))
            .work(Duration.ofMillis(Long.parseLong(args[3])))
            .restartGuard(Boolean.parseBoolean(args[4]))
            .pauseBetweenCheckAndWrite(Boolean.parseBoolean(args[5]))
            .seed(Long.parseLong(args[6]))
            .build();
    List<String> resources = Arrays.asList(args[7].split(","));
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    History history = new History();
    TortureCounters counters = new TortureCounters();
    List<Redlock> redlocks = new ArrayList<>();
    Map<String, TortureClient> clients = new HashMap<>();
    long end = System.nanoTime() + options.duration().toNanos();
    TortureListener holdings =
        new TortureListener() {
          @Override
          public void holding(String client, String resource) {
            synchronized (out) {
              out.println(resource == null ? "R " + client : "H " + client + " " + resource);
            }
          }
        };
    try {
      String[] clientNodes = System.getenv(NODES_ENV).split(" ");
      for (int i = 0; i < clientNodes.length; i++) {
        String name = clientNodes[i].substring(0, clientNodes[i].indexOf('='));
        List<String> uris = Arrays.asList(clientNodes[i].substring(name.length() + 1).split(","));
        Redlock redlock = Redlock.create(TortureRun.config(options, uris));
        redlocks.add(redlock);
        TortureClient client =
            new TortureClient(
                name,
                redlock,
                resources,
                options,
                history,
                counters,
                options.seed() * 1_000 + 8 + i, // as when the clients were arguments 8 and on
                end,
                holdings,
                null); // fencing runs in one process: TortureOptions refuses it here
        clients.put(name, client);
      }
      Thread commands =
          new Thread(
              () -> {
                try (BufferedReader in =
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = in.readLine()) != null) {
                    TortureClient client =
                        line.startsWith("pause ") ? clients.get(line.substring(6)) : null;
                    if (client != null) {
                      client.requestPause();
                    }
                  }
                } catch (java.io.IOException e) {
                  // the run closed our input: nothing more will come
                }
              },
              "torture-commands");
      commands.setDaemon(true);
      commands.start();
      Thread reporter =
          new Thread(
              () -> {
                while (!Thread.currentThread().isInterrupted()) {
                  synchronized (out) {
                    out.println("P " + counters.attempts() + " " + counters.acquired());
                  }
                  try {
                    Thread.sleep(500);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "torture-progress");
      reporter.setDaemon(true);
      reporter.start();
      List<Thread> threads = new ArrayList<>();
      for (TortureClient client : clients.values()) {
        Thread thread = new Thread(client, "torture-" + client.name());
        threads.add(thread);
        thread.start();
      }
      for (Thread thread : threads) {
        thread.join();
      }
      HistoryFile.write(historyFile, history, counters);
    } finally {
      redlocks.forEach(Redlock::close);
    }
    out.println("DONE");
  }
}
