package io.redlock.lettuce;

import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.redlock.spi.ExtendRequest;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The keys and arguments of one {@link Script#EXTEND_BATCH} script (the keys, the ttl, then a
 * token per key), encoded once as RESP bulk strings in UTF-8 ({@link ScriptArgs#bulk}), and
 * the requests they were encoded from.
 *
 * <p>An auto-extension batch goes to every node with the same keys and arguments; only the
 * script's reference differs from node to node (its digest where the node loaded it, its
 * source before). {@link Last} lets the nodes of one transport share one encoding of a batch,
 * and each node's connection copies its bytes as they are ({@link #withScript}), where each
 * node encoded every key and token again before: in one JFR profile of a client holding
 * 100,000 leases, {@code ScriptArgs.encode} took about 40 % of the Java samples.
 *
 * <p>Immutable; {@link #toString()} names the number of keys, never a key or a token.
 */
final class BatchBody {
  private final ExtendRequest[] of;
  private final String firstKey;
  private final int keys;
  private final byte[] bytes;
  private final int length;
  private final long size;

  private BatchBody(
      ExtendRequest[] of, String firstKey, int keys, byte[] bytes, int length, long size) {
    this.of = of;
    this.firstKey = firstKey;
    this.keys = keys;
    this.bytes = bytes;
    this.length = length;
    this.size = size;
  }

  /**
   * The body of the requests {@code indexes} of {@code requests} (all of them when {@code
   * null}), single-key leases that share a ttl, in that order.
   */
  static BatchBody encode(List<ExtendRequest> requests, List<Integer> indexes) {
    int n = indexes == null ? requests.size() : indexes.size();
    ExtendRequest[] of = new ExtendRequest[n];
    long chars = 0;
    for (int i = 0; i < n; i++) {
      of[i] = requests.get(indexes == null ? i : indexes.get(i));
      chars += of[i].keys().get(0).length() + of[i].token().length();
    }
    String ttl = Long.toString(of[0].ttlMillis());
    // A plain heap buffer, outside any allocator's accounting (Unpooled's would count its bytes
    // as in use for good): its array is kept as the body, and never released.
    ByteBuf target =
        new UnpooledHeapByteBuf(
            UnpooledByteBufAllocator.DEFAULT,
            (int) Math.min(Integer.MAX_VALUE, chars + 32L * n + 32),
            Integer.MAX_VALUE);
    byte[] ascii = ScriptArgs.scratch();
    for (ExtendRequest request : of) {
      ScriptArgs.bulk(target, request.keys().get(0), ascii);
    }
    ScriptArgs.bulk(target, ttl, ascii);
    for (ExtendRequest request : of) {
      ScriptArgs.bulk(target, request.token(), ascii);
    }
    // Counted in the node's backlog as BatchedExtensions always counted a script: by chars.
    long size = NodeBacklog.OVERHEAD_BYTES + ttl.length() + chars + 2L * n;
    return new BatchBody(of, of[0].keys().get(0), n, target.array(), target.writerIndex(), size);
  }

  /** Whether this body was encoded from exactly these requests, in this order. */
  boolean isOf(List<ExtendRequest> requests) {
    if (requests.size() != of.length) {
      return false;
    }
    for (int i = 0; i < of.length; i++) {
      // A request is an immutable record: the same one is the same keys, token and ttl.
      if (requests.get(i) != of[i]) {
        return false;
      }
    }
    return true;
  }

  /** How many keys (and leases) the body carries. */
  int keys() {
    return keys;
  }

  /** The size this script counts for in a node's backlog ({@link NodeBacklog#admitBatch}). */
  long size() {
    return size;
  }

  /**
   * The arguments of an {@code EVALSHA} ({@code script} the digest) or {@code EVAL} (the
   * source) of this body: the bytes {@link ScriptArgs} writes for the same keys and arguments.
   */
  CommandArgs<String, String> withScript(byte[] script) {
    return new Args(script);
  }

  @Override
  public String toString() {
    return "BatchBody[keys=" + keys + ", bytes=" + length + "]";
  }

  /** The script's reference and count, then the body's bytes as they are. */
  private final class Args extends CommandArgs<String, String> {
    private final byte[] script;

    Args(byte[] script) {
      super(ExactUtf8Codec.UTF8);
      this.script = script;
    }

    @Override
    public int count() {
      return 2 + keys + 1 + keys;
    }

    @Override
    public void encode(ByteBuf target) {
      ScriptArgs.head(target, script, keys);
      target.writeBytes(bytes, 0, length);
    }

    @Override
    public ByteBuffer getFirstEncodedKey() {
      return ExactUtf8Codec.UTF8.encodeKey(firstKey);
    }

    @Override
    public String toCommandString() {
      return toString();
    }

    @Override
    public String toString() {
      return ScriptArgs.describe("BatchBody.Args", script, keys, keys + 1);
    }
  }

  /**
   * The last batch encoded by the nodes of one transport: the first node a batch goes to
   * encodes it, the others find it here. A batch is matched by its requests' identity, one by
   * one ({@link #isOf}): a list the caller changed, or a list of other requests (equal or not),
   * is encoded again, never sent with another batch's bytes. Thread-safe: a batch another
   * thread encoded in between only costs an encoding. The last batch stays here until the next
   * one (at most {@link LettuceTransport#MAX_BATCH_KEYS} keys and tokens, a few tens of kB).
   */
  static final class Last {
    private volatile BatchBody last;
    private final AtomicLong encodings = new AtomicLong();

    /** The body of all of {@code requests}, encoded unless it is the last one. */
    BatchBody of(List<ExtendRequest> requests) {
      BatchBody body = last;
      if (body == null || !body.isOf(requests)) {
        body = encode(requests, null);
        encodings.incrementAndGet();
        last = body;
      }
      return body;
    }

    /** How many batches were encoded here: one per batch, whatever the number of nodes. */
    long encodings() {
      return encodings.get();
    }
  }
}
