package io.redlock;

import io.redlock.internal.Futures;
import io.redlock.internal.LockEngine;
import io.redlock.internal.NodeUris;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeSettings;
import io.redlock.spi.NodeTransport;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.ServiceLoader;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a {@link Redlock} comes up: a transport for every node, the connections, and the
 * restart guard's start-up checks, each within the connect timeout. Whatever was opened is
 * closed again if any step fails.
 */
final class Connector {
  private static final Logger log = LoggerFactory.getLogger(Redlock.class);

  private Connector() {}

  static Redlock create(RedlockConfig config) {
    List<NodeTransport> transports = new ArrayList<>();
    ServiceLoader.load(NodeTransport.class, Redlock.class.getClassLoader())
        .forEach(transports::add);
    List<NodeTransport> chosen = new ArrayList<>();
    for (int i = 0; i < config.nodes().size(); i++) {
      URI uri = URI.create(config.nodes().get(i));
      NodeTransport match = null;
      for (NodeTransport transport : transports) {
        if (transport.supports(uri)) {
          match = transport;
          break;
        }
      }
      if (match == null) {
        transports.forEach(NodeTransport::close);
        throw new RedlockConfigException(
            "nodes["
                + i
                + "] "
                + NodeUris.displayName(config.nodes().get(i))
                + " is not accepted: no transport for"
                + " scheme '"
                + uri.getScheme()
                + "' is on the class path; add the"
                + " io.redlock:redlock-lettuce dependency for redis:// and rediss://");
      }
      chosen.add(match);
    }
    for (NodeTransport transport : transports) {
      if (!chosen.contains(transport)) {
        transport.close();
      }
    }
    return open(config, chosen, transports.stream().filter(chosen::contains).distinct().toList());
  }

  static Redlock create(RedlockConfig config, NodeTransport transport) {
    List<NodeTransport> chosen = new ArrayList<>();
    for (int i = 0; i < config.nodes().size(); i++) {
      if (!transport.supports(URI.create(config.nodes().get(i)))) {
        throw new RedlockConfigException(
            "nodes["
                + i
                + "] "
                + NodeUris.displayName(config.nodes().get(i))
                + " is not accepted by the transport "
                + transport.getClass().getName());
      }
      chosen.add(transport);
    }
    return open(config, chosen, List.of());
  }

  private static Redlock open(
      RedlockConfig config, List<NodeTransport> perNode, List<NodeTransport> owned) {
    OwnedResources resources = new OwnedResources(owned);
    LockEngine engine = null;
    try {
      for (int i = 0; i < perNode.size(); i++) {
        NodeSettings node = NodeSettings.of(config.nodes().get(i), config);
        resources.clients.add(perNode.get(i).open(node));
      }
      awaitConnections(config, resources.clients);
      engine =
          new LockEngine(
              config,
              resources.clients,
              resources.time,
              new Random(),
              orInline(resources.callbacks),
              resources.events(config.listeners()));
      awaitFirstProbes(config, engine.startGuard());
    } catch (RuntimeException e) {
      if (engine != null) {
        engine.close();
      }
      resources.close();
      throw e;
    }
    log.info(
        "Redlock ready: nodes={} quorum={} restartGuard={}",
        resources.clients.size(),
        engine.quorum(),
        config.restartGuard());
    log.debug("configuration: {}", config);
    return new Redlock(engine, resources);
  }

  private static void awaitConnections(RedlockConfig config, List<NodeClient> clients) {
    List<CompletableFuture<Void>> connected = new ArrayList<>();
    for (NodeClient client : clients) {
      connected.add(client.connected().toCompletableFuture());
    }
    long deadline = System.nanoTime() + config.connectTimeout().toNanos();
    boolean interrupted = false;
    for (CompletableFuture<Void> future : connected) {
      try {
        future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        interrupted = true;
        break;
      } catch (ExecutionException | TimeoutException e) {
        // looked at below, node by node
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    int up = 0;
    for (int i = 0; i < clients.size(); i++) {
      CompletableFuture<Void> future = connected.get(i);
      if (future.isDone() && !future.isCompletedExceptionally()) {
        up++;
        continue;
      }
      Throwable cause = future.isDone() ? causeOf(future) : null;
      if (cause instanceof RedlockConfigException) {
        throw (RedlockConfigException) cause;
      }
      log.warn(
          "node={} not connected yet ({}); it is retried and counts once connected",
          clients.get(i).name(),
          cause == null
              ? "no answer within the connect timeout"
              : String.valueOf(cause.getMessage()));
    }
    if (up < config.quorum()) {
      log.warn(
          "only {} of {} nodes connected: acquisitions fail until a majority is reachable",
          up,
          clients.size());
    }
  }

  private static Throwable causeOf(CompletableFuture<Void> failed) {
    try {
      failed.join();
      return null;
    } catch (CancellationException e) {
      return e;
    } catch (CompletionException e) {
      return Futures.unwrap(e);
    }
  }

  /** Waits, within the connect timeout, for the start-up checks of the nodes reached. */
  private static void awaitFirstProbes(RedlockConfig config, CompletableFuture<Void> probes) {
    try {
      probes.get(config.connectTimeout().toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (TimeoutException e) {
      log.debug("start-up checks not done within the connect timeout; they go on");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RedlockConfigException) {
        throw (RedlockConfigException) e.getCause();
      }
      throw new RedlockException("start-up checks failed: " + e.getCause(), e.getCause());
    }
  }

  /**
   * Threads for what callers run on the library's futures and listeners: a cached pool, so a
   * callback that blocks takes a thread of its own instead of one the algorithm needs.
   */
  static ExecutorService callbackExecutor() {
    AtomicInteger count = new AtomicInteger();
    return Executors.newCachedThreadPool(
        runnable -> {
          Thread thread = new Thread(runnable, "redlock-callback-" + count.incrementAndGet());
          thread.setDaemon(true);
          return thread;
        });
  }

  /**
   * Runs tasks on {@code pool}, or on the calling thread once the pool is shut down: a future
   * that settles after {@link #close()} (a release the caller started just before) must still
   * complete for whoever waits on it, not be dropped with the pool.
   */
  private static Executor orInline(ExecutorService pool) {
    return task -> {
      try {
        pool.execute(task);
      } catch (RejectedExecutionException e) {
        task.run();
      }
    };
  }
}
