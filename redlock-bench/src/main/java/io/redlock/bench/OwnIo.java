package io.redlock.bench;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolVersion;
import io.lettuce.core.protocol.RedisStateMachine;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * The experiment of issue 26 (item 7): the fan-out floor of {@code lettuce-fanout} with the
 * calling thread doing its own I/O, no event loop in between. The caller writes {@code SET key
 * token NX PX ttl} to every node, waits on all sockets at once with a {@link Selector} of its
 * own, decides at a quorum (or at the node timeout), and leaves the replies that come
 * late to be skipped by its next round on those connections; the release ({@code EVALSHA} of
 * the compare-and-delete script) goes the same way.
 *
 * <p>Each calling thread owns a set of connections, one per node with their selector, for
 * as long as it calls. Not a pool checked out per call: a first version did that, and a
 * {@code SET} that came late on one connection could then be executed by its node after the
 * release had gone down another connection to it, leaving a key that blocked the resource for
 * a whole ttl (30 such acquisitions failed after the 10 s wait in a 5 s window at 64 threads).
 * On the same connections, a node executes the release after the late {@code SET}.
 *
 * <p>The protocol code is Lettuce's: {@link Command#encode} writes the request, a {@link
 * RedisStateMachine} per connection reads the replies. {@code AUTH} (user and password from
 * the URI) runs when a connection opens. Plain TCP only: no TLS, no reconnection, no guard.
 */
final class OwnIo {
  private OwnIo() {}

  /** How long a round waits for a quorum: the library's default node timeout. */
  static final long NODE_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  /** The fan-out floor over {@code uris}, driven by the calling thread. */
  static LockUnderTest fanout(String name, List<String> uris, Adapters.Retry retry) {
    List<RedisURI> nodes = uris.stream().map(RedisURI::create).toList();
    Opened opened = new Opened(nodes);
    String sha = opened.open().sha; // connects now: a wrong password fails here, not in a cycle
    ThreadLocal<Slot> own = ThreadLocal.withInitial(opened::open);
    int quorum = nodes.size() / 2 + 1;
    byte[] ttl = Long.toString(Adapters.TTL.toMillis()).getBytes(StandardCharsets.US_ASCII);
    AtomicLong sequence = new AtomicLong(ThreadLocalRandom.current().nextLong());
    return new LockUnderTest() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public int nodes() {
        return nodes.size();
      }

      @Override
      public AutoCloseable lock(String resource) throws Exception {
        long start = System.nanoTime();
        while (true) {
          String token = Long.toHexString(sequence.incrementAndGet());
          ByteBuf set =
              encode(
                  CommandType.SET,
                  args().addKey(resource).addValue(token).add("NX").add("PX").add(ttl));
          boolean granted = own.get().round(set, r -> "OK".equals(r.value), quorum);
          if (granted) {
            return () -> release(resource, token);
          }
          release(resource, token);
          if (!retry.waitAgain(start)) {
            return null;
          }
        }
      }

      private void release(String resource, String token) throws IOException {
        ByteBuf unlock =
            encode(CommandType.EVALSHA, args().add(sha).add(1).addKey(resource).addValue(token));
        own.get().round(unlock, r -> true, quorum);
      }

      @Override
      public void close() {
        opened.close();
      }
    };
  }

  private static CommandArgs<String, String> args() {
    return new CommandArgs<>(StringCodec.UTF8);
  }

  private static ByteBuf encode(CommandType type, CommandArgs<String, String> args) {
    ByteBuf out = Unpooled.buffer(96);
    new Command<>(type, new Reply(), args).encode(out);
    return out;
  }

  /** One reply, as the state machine hands it over: a status, bulk string or integer. */
  static final class Reply extends CommandOutput<String, String, Object> {
    Object value;

    Reply() {
      super(StringCodec.UTF8, null);
    }

    @Override
    public void set(ByteBuffer bytes) {
      value = bytes == null ? null : StandardCharsets.UTF_8.decode(bytes).toString();
    }

    @Override
    public void set(long number) {
      value = number;
    }
  }

  /** Every connection set opened, to close them all at the end. */
  static final class Opened {
    private final List<RedisURI> nodes;
    private final List<Slot> all = new ArrayList<>();

    Opened(List<RedisURI> nodes) {
      this.nodes = nodes;
    }

    Slot open() {
      Slot slot;
      try {
        slot = new Slot(nodes);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      synchronized (all) {
        all.add(slot);
      }
      return slot;
    }

    void close() {
      synchronized (all) {
        all.forEach(Slot::close);
      }
    }
  }

  /** One connection per node and the selector that waits on all of them. */
  static final class Slot {
    final Selector selector;
    final Conn[] conns;
    final String sha;

    Slot(List<RedisURI> nodes) throws IOException {
      selector = Selector.open();
      conns = new Conn[nodes.size()];
      String loaded = null;
      for (int i = 0; i < conns.length; i++) {
        conns[i] = new Conn(nodes.get(i));
        loaded = conns[i].scriptSha;
        conns[i].channel.configureBlocking(false);
        conns[i].channel.register(selector, SelectionKey.OP_READ, conns[i]);
      }
      sha = loaded;
    }

    /**
     * Writes {@code request} to every node, then waits on all sockets at once until {@code
     * quorum} replies passed {@code accept} (true) or so many failed or the node timeout passed
     * that they cannot (false). Replies still out are skipped by the next round.
     */
    boolean round(ByteBuf request, Predicate<Reply> accept, int quorum) throws IOException {
      int yes = 0;
      int no = 0;
      int n = conns.length;
      for (Conn c : conns) {
        c.waiting = true;
        ByteBuffer bytes = request.nioBuffer();
        try {
          while (bytes.hasRemaining()) {
            c.channel.write(bytes);
          }
        } catch (IOException e) {
          c.waiting = false;
          no++;
        }
      }
      long deadline = System.nanoTime() + NODE_TIMEOUT_NANOS;
      while (yes < quorum && no <= n - quorum) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        Iterator<SelectionKey> ready = selector.selectedKeys().iterator();
        while (ready.hasNext()) {
          Conn c = (Conn) ready.next().attachment();
          ready.remove();
          if (c.in.writeBytes(c.channel, 4096) < 0) {
            throw new IOException("connection closed by the node");
          }
          for (Reply r = c.next(); r != null; r = c.next()) {
            if (c.skip > 0) {
              c.skip--;
            } else if (c.waiting) {
              c.waiting = false;
              if (!r.hasError() && accept.test(r)) {
                yes++;
              } else {
                no++;
              }
            }
          }
          c.in.discardSomeReadBytes();
        }
      }
      for (Conn c : conns) {
        if (c.waiting) {
          c.waiting = false;
          c.skip++; // its reply comes late: the next round on this connection skips it
        }
      }
      return yes >= quorum;
    }

    void close() {
      for (Conn c : conns) {
        try {
          c.channel.close();
        } catch (IOException ignored) {
          // closing anyway
        }
      }
      try {
        selector.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
  }

  /** One connection: its socket, what it has read, the state machine decoding it. */
  static final class Conn {
    final SocketChannel channel;
    final ByteBuf in = Unpooled.buffer(4096);
    final RedisStateMachine machine = new RedisStateMachine();
    final String scriptSha;
    Reply partial;
    int skip;
    boolean waiting;

    Conn(RedisURI uri) throws IOException {
      machine.setProtocolVersion(ProtocolVersion.RESP2);
      channel = SocketChannel.open(new InetSocketAddress(uri.getHost(), uri.getPort()));
      channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
      if (uri.getCredentialsProvider() != null) {
        RedisCredentials credentials = uri.getCredentialsProvider().resolveCredentials().block();
        if (credentials != null && credentials.hasPassword()) {
          CommandArgs<String, String> auth = args();
          if (credentials.hasUsername()) {
            auth.add(credentials.getUsername());
          }
          auth.add(credentials.getPassword());
          Reply r = call(CommandType.AUTH, auth);
          if (r.hasError()) {
            throw new IOException("AUTH refused by " + uri.getHost() + ":" + uri.getPort());
          }
        }
      }
      Reply sha = call(CommandType.SCRIPT, args().add("LOAD").add(Adapters.UNLOCK_SCRIPT));
      if (sha.hasError()) {
        throw new IOException("SCRIPT LOAD failed: " + sha.getError());
      }
      scriptSha = (String) sha.value;
    }

    /** One request and its reply, blocking: only while the channel is still in blocking mode. */
    private Reply call(CommandType type, CommandArgs<String, String> args) throws IOException {
      ByteBuffer bytes = encode(type, args).nioBuffer();
      while (bytes.hasRemaining()) {
        channel.write(bytes);
      }
      while (true) {
        Reply r = next();
        if (r != null) {
          return r;
        }
        if (in.writeBytes(channel, 4096) < 0) {
          throw new IOException("connection closed by the node");
        }
      }
    }

    /** The next whole reply in what was read, or null if it has not all come yet. */
    Reply next() {
      Reply r = partial == null ? new Reply() : partial;
      if (machine.decode(in, r)) {
        partial = null;
        return r;
      }
      partial = r;
      return null;
    }
  }
}
