package io.redlock.bench;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.redlock.lettuce.LettuceTransport;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The connections of the Lettuce fan-out floors ({@code lettuce-fanout}, {@link FencedFloor}):
 * one per node, with what this library's transport gives the commands of its rounds
 * (asynchronous API, flushes consolidated, no Lettuce timeout on any command, commands refused
 * while disconnected, its encoding: {@link TransportEncoding}), and a round that asks every
 * node at once and is decided at a majority. Nothing else: no validity, node timeout, restart
 * guard or lease bookkeeping; a caller gives up on a round that no majority decided within
 * {@link #ROUND_LIMIT}, so that a silent node cannot block a run.
 */
final class Fanout implements AutoCloseable {

  /** One request of a round: what to send to the node at {@code index}, answered yes or no. */
  interface Request {
    CompletionStage<Boolean> send(int index, RedisAsyncCommands<String, String> node);
  }

  /** How long a caller waits for a round's decision before the run fails: 10 s. */
  static final Duration ROUND_LIMIT = Duration.ofSeconds(10);

  /**
   * The floors' client options: Lettuce's defaults give every command a timer (made and
   * cancelled per command, 60 s), which this library's rounds do without (its CommandTimeouts);
   * a floor with them would cost more than the library for a reason of configuration.
   */
  private static final ClientOptions OPTIONS =
      ClientOptions.builder()
          .timeoutOptions(TimeoutOptions.builder().timeoutCommands(false).build())
          .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
          .build();

  private final ClientResources resources;
  private final List<RedisClient> clients = new ArrayList<>();
  private final List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();
  private final List<RedisAsyncCommands<String, String>> nodes = new ArrayList<>();
  private final int quorum;

  Fanout(List<String> uris) {
    if (uris.isEmpty()) {
      throw new IllegalArgumentException("a fan-out needs at least one node; none was given");
    }
    resources =
        DefaultClientResources.builder()
            .nettyCustomizer(LettuceTransport.consolidatingFlushes(null))
            .build();
    try {
      for (String uri : uris) {
        RedisClient client = RedisClient.create(resources, uri);
        client.setOptions(OPTIONS);
        clients.add(client);
        StatefulRedisConnection<String, String> connection =
            client.connect(TransportEncoding.CODEC);
        connections.add(connection);
        nodes.add(connection.async());
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
    quorum = uris.size() / 2 + 1;
  }

  int size() {
    return nodes.size();
  }

  /** The commands of node {@code index} (from 0). */
  RedisAsyncCommands<String, String> node(int index) {
    return nodes.get(index);
  }

  /** Loads {@code script} on every node; its SHA-1 in hexadecimal, as {@code EVALSHA} takes it. */
  byte[] load(String script) {
    String sha = null;
    for (StatefulRedisConnection<String, String> connection : connections) {
      sha = connection.sync().scriptLoad(script);
    }
    return sha.getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * {@code EVALSHA sha keys args} of a script that answers an integer, its arguments encoded as
   * the transport encodes a round's script ({@link TransportEncoding#scriptArgs}).
   */
  static RedisFuture<Long> evalsha(
      RedisAsyncCommands<String, String> node, byte[] sha, String[] keys, String... args) {
    return node.dispatch(
        CommandType.EVALSHA,
        new IntegerOutput<>(TransportEncoding.CODEC),
        TransportEncoding.scriptArgs(sha, keys, args));
  }

  /** Each node's value of {@code key} ({@code null} where it has none), read one node at a time. */
  List<String> values(String key) {
    List<String> values = new ArrayList<>();
    for (StatefulRedisConnection<String, String> connection : connections) {
      values.add(connection.sync().get(key));
    }
    return values;
  }

  /**
   * Sends {@code request} to every node at once; completes with true once a quorum said yes,
   * with false once it cannot, on the thread of the answer that decided (a node's event loop).
   */
  CompletableFuture<Boolean> majority(Request request) {
    CompletableFuture<Boolean> decided = new CompletableFuture<>();
    AtomicInteger yes = new AtomicInteger();
    AtomicInteger no = new AtomicInteger();
    for (int i = 0; i < nodes.size(); i++) {
      request
          .send(i, nodes.get(i))
          .whenComplete(
              (ok, error) -> {
                if (error == null && ok) {
                  if (yes.incrementAndGet() == quorum) {
                    decided.complete(true);
                  }
                } else if (no.incrementAndGet() == nodes.size() - quorum + 1) {
                  decided.complete(false);
                }
              });
    }
    return decided;
  }

  /**
   * Sends the release script {@code sha} (compare-and-delete of {@code key} against {@code
   * token}) to every node at once and waits for a majority of answers, whatever they say.
   */
  void release(byte[] sha, String key, String token) throws InterruptedException {
    String[] keys = {key};
    await(majority((i, node) -> evalsha(node, sha, keys, token).thenApply(deleted -> true)));
  }

  /** Waits for a round's decision, at most {@link #ROUND_LIMIT}. */
  static boolean await(CompletableFuture<Boolean> round) throws InterruptedException {
    try {
      return round.get(ROUND_LIMIT.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "no majority of the nodes decided a round within " + ROUND_LIMIT, e);
    }
  }

  /**
   * A lease token of the length this library's are (40 hex digits, {@code Tokens}): a fixed
   * part and a counter from a random start, unique within a run.
   */
  static String token(AtomicLong sequence) {
    return TOKEN_PREFIX.concat(Long.toHexString(sequence.incrementAndGet() | Long.MIN_VALUE));
  }

  private static final String TOKEN_PREFIX = "f1004f1004f1004f1004f100";

  @Override
  public void close() {
    connections.forEach(StatefulRedisConnection::close);
    clients.forEach(client -> client.shutdown(0, 2, TimeUnit.SECONDS));
    resources.shutdown(0, 2, TimeUnit.SECONDS);
  }
}
