package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.protocol.CommandHandler;
import io.lettuce.core.resource.ClientResources;
import io.netty.channel.Channel;
import io.redlock.Lease;
import io.redlock.NodeOutcome.Vote;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One node of five stopped (SIGSTOP) under load from many threads: what the client holds for
 * it stays bounded, its votes fail at once, and it counts again once it resumes. Memory is
 * judged by counting, not by time or heap: the commands Lettuce holds for the stopped node's
 * connection (its command stack, read on the connection's own event loop) and the requests
 * the transport counts for it, sampled while a fixed number of lock cycles run during the
 * stop. Without the bounds the stack grows by two commands per cycle (a lock and a release).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StalledNodeIT {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final int THREADS = 16;

  /** Cycles run while the node is stopped: ten times the bound, two commands each. */
  private static final int CYCLES_DURING_STOP = 10 * LettuceTransport.LETTUCE_QUEUE_SIZE;

  private RedisServers servers;
  private ClientResources resources;
  private LettuceTransport transport;
  private Redlock redlock;
  private final Set<Channel> channels = ConcurrentHashMap.newKeySet();
  private CapturingTransport capturing;
  private final AtomicLong stalledVotes = new AtomicLong();

  /** The stopped node's votes failed without a request: STALLED, or HELD_BACK by the guard. */
  private final AtomicLong unaskedVotes = new AtomicLong();

  private final AtomicLong grantedByStopped = new AtomicLong();
  private final AtomicLong timeoutsOfStopped = new AtomicLong();

  @BeforeEach
  void start() {
    servers = RedisServers.startFresh(5);
    resources = ObservedResources.seeing(channels::add);
    transport = new LettuceTransport(resources);
    capturing = new CapturingTransport(transport);
    RedlockListener votes =
        new RedlockListener() {
          @Override
          public void nodeVoted(RedlockEvent.NodeVote event) {
            if (event.outcome().index() != 0) {
              return; // the node this test stops
            }
            if (event.outcome().vote() == Vote.STALLED) {
              stalledVotes.incrementAndGet();
              unaskedVotes.incrementAndGet();
            } else if (event.outcome().vote() == Vote.HELD_BACK) {
              unaskedVotes.incrementAndGet();
            } else if (event.outcome().vote() == Vote.GRANTED) {
              grantedByStopped.incrementAndGet();
            } else if (event.outcome().vote() == Vote.TIMEOUT) {
              timeoutsOfStopped.incrementAndGet();
            }
          }
        };
    // The defaults users get, with the restart guard on and the fleet declared fresh.
    redlock =
        Redlock.create(
            RedlockConfig.builder().nodes(servers.uris()).listener(votes).build(), capturing);
  }

  @AfterEach
  void stop() {
    if (servers != null && servers.isPaused(0)) {
      servers.resume(0);
    }
    if (redlock != null) {
      redlock.close();
    }
    if (transport != null) {
      transport.close();
    }
    if (resources != null) {
      resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
    }
    if (servers != null) {
      servers.close();
    }
  }

  @Test
  void aStoppedNodeHoldsABoundedBacklogFailsItsVotesAtOnceAndCountsAgainOnResume()
      throws Exception {
    LettuceNodeClient node = clientOf(0);
    Load load = new Load(redlock);
    try {
      load.awaitCycles(2_000);
      servers.pause(0);
      long stoppedAt = load.cycles();
      Timing.await("the stopped node set aside", Duration.ofSeconds(30), node.backlog()::isSilent);
      long setAsideAt = load.cycles();
      long stalledAtSetAside = stalledVotes.get();
      long unaskedAtSetAside = unaskedVotes.get();
      // Vote events arrive in order through the listener's queue, which may lag behind the
      // cycles: once it has heard the stopped node's votes of 1,000 attempts sent after it was
      // set aside, the votes of attempts sent before (timed out within a node timeout) are in.
      load.awaitCycles(setAsideAt + 2_000);
      Timing.await(
          "the listener to hear 1,000 votes not sent to the stopped node",
          () -> unaskedVotes.get() - unaskedAtSetAside >= 1_000);
      long timeoutsAfterSetAside = timeoutsOfStopped.get();

      int mostCommandsHeld = 0;
      int mostRequestsCounted = 0;
      while (load.cycles() - stoppedAt < CYCLES_DURING_STOP
          || load.cycles() - setAsideAt < CYCLES_DURING_STOP / 2) {
        load.awaitCycles(load.cycles() + 250);
        mostCommandsHeld = Math.max(mostCommandsHeld, commandsHeldFor(0));
        mostRequestsCounted = Math.max(mostRequestsCounted, node.backlog().requests());
      }

      assertThat(mostCommandsHeld)
          .as("commands Lettuce holds for the stopped node, over %d cycles", CYCLES_DURING_STOP)
          .isLessThanOrEqualTo(LettuceTransport.LETTUCE_QUEUE_SIZE);
      // Votes stop at the bound, releases at twice the bound.
      assertThat(mostRequestsCounted)
          .isLessThanOrEqualTo(2 * LettuceTransport.MAX_PENDING_REQUESTS);
      assertThat(node.backlog().peakRequests())
          .isLessThanOrEqualTo(2 * LettuceTransport.MAX_PENDING_REQUESTS);
      assertThat(node.backlog().peakBytes())
          .isLessThanOrEqualTo(2 * LettuceTransport.MAX_PENDING_BYTES);
      assertThat(node.backlog().isSilent()).as("set aside").isTrue();
      // Once set aside, the node's vote in each attempt failed at once, without a request
      // sent: STALLED, or HELD_BACK once the restart guard stopped counting it (5 s without a
      // confirmed probe); never again a vote that waited for the node timeout.
      assertThat(stalledVotes.get() - stalledAtSetAside).isPositive();
      assertThat(timeoutsOfStopped.get()).isEqualTo(timeoutsAfterSetAside);

      // Once the release room is full too, nothing more is written to the node while it is
      // set aside: not its votes, not its releases, and not the restart guard's probes, which
      // ask every node once a second and would stay in Lettuce's stack unanswered (a minute of
      // them filled it past its bound, where Lettuce logs a WARN per refused command). Read
      // again once the guard asked the node twice more (a probe and a register raise each).
      Timing.await(
          "the release room of the stopped node full",
          Duration.ofSeconds(30),
          () -> node.backlog().requests() == 2 * LettuceTransport.MAX_PENDING_REQUESTS);
      int heldWhenFull = commandsHeldFor(0);
      long guardAsked = node.backlog().otherRequestsNotSent();
      Timing.await(
          "two more probes of the restart guard",
          Duration.ofSeconds(30),
          () -> node.backlog().otherRequestsNotSent() >= guardAsked + 4);
      assertThat(commandsHeldFor(0))
          .as("commands held for the node set aside, its release room full")
          .isEqualTo(heldWhenFull);

      servers.resume(0);
      long grantedBefore = grantedByStopped.get();
      Timing.await(
          "the resumed node answers and counts again",
          Duration.ofSeconds(30),
          () -> !node.backlog().isSilent() && grantedByStopped.get() > grantedBefore);
      Timing.await(
          "everything held for it is freed once it answered",
          Duration.ofSeconds(30),
          () -> commandsHeldFor(0) < THREADS * 2);
    } finally {
      load.stop();
    }
  }

  private LettuceNodeClient clientOf(int index) {
    return capturing.clientOf(servers.uri(index), redlock.config());
  }

  /** The commands Lettuce holds on node {@code index}'s open connections, read on their loops. */
  private int commandsHeldFor(int index) {
    int held = 0;
    for (Channel channel : channels) {
      if (!channel.isActive()
          || !(channel.remoteAddress() instanceof InetSocketAddress address)
          || address.getPort() != servers.port(index)) {
        continue;
      }
      try {
        held +=
            channel
                .eventLoop()
                .submit(() -> channel.pipeline().get(CommandHandler.class).getStack().size())
                .get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        throw new AssertionError("could not read the command stack of " + channel, e);
      }
    }
    return held;
  }

  /** {@link #THREADS} threads locking and releasing resources of their own, until stopped. */
  private static final class Load {
    private final AtomicLong cycles = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<Thread> threads = new ArrayList<>();

    Load(Redlock redlock) {
      for (int t = 0; t < THREADS; t++) {
        String resource = "stalled:" + t;
        Thread thread =
            new Thread(
                () -> {
                  while (running.get()) {
                    try {
                      // A cycle may fail on this shared machine (two more nodes slower than
                      // the node timeout in the same round): it still counts as work done.
                      Optional<Lease> lease = redlock.tryAcquire(resource, TTL);
                      lease.ifPresent(Lease::close);
                      cycles.incrementAndGet();
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                },
                "load-" + t);
        threads.add(thread);
        thread.start();
      }
    }

    long cycles() {
      return cycles.get();
    }

    void awaitCycles(long count) throws InterruptedException {
      Timing.await(count + " lock cycles", Duration.ofSeconds(60), () -> cycles.get() >= count);
    }

    void stop() throws InterruptedException {
      running.set(false);
      for (Thread thread : threads) {
        thread.join(TimeUnit.SECONDS.toMillis(30));
      }
    }
  }
}
