package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.resource.NettyCustomizer;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.flush.FlushConsolidationHandler;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FlushConsolidationTest {

  /** Counts what reaches the socket end of the pipeline. */
  private static final class SocketSide extends ChannelOutboundHandlerAdapter {
    int writes;
    int flushes;

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
      writes++;
      ctx.write(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
      flushes++;
      ctx.flush();
    }
  }

  @Test
  void requestsQueuedTogetherLeaveInOneFlush() {
    EmbeddedChannel channel = new EmbeddedChannel();
    LettuceTransport.consolidatingFlushes(null).afterChannelInitialized(channel);
    SocketSide socket = new SocketSide();
    channel.pipeline().addFirst(socket);
    // Three requests, each written and flushed, in one turn of the event loop: as when
    // several callers' requests wait in its queue. (EmbeddedChannel runs the loop's pending
    // tasks only when the outermost channel operation returns.)
    channel
        .pipeline()
        .addLast(
            new ChannelOutboundHandlerAdapter() {
              @Override
              public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                promise.setSuccess();
                for (int i = 0; i < 3; i++) {
                  ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {(byte) i}));
                }
              }
            });

    channel.writeAndFlush("three requests");

    assertThat(socket.writes).isEqualTo(3);
    assertThat(socket.flushes).isEqualTo(1);
    assertThat(channel.outboundMessages()).hasSize(3);
    channel.finishAndReleaseAll();
  }

  @Test
  void aLoneRequestIsFlushedAsSoonAsTheLoopIsFree() {
    EmbeddedChannel channel = new EmbeddedChannel();
    LettuceTransport.consolidatingFlushes(null).afterChannelInitialized(channel);

    channel.pipeline().writeAndFlush(Unpooled.wrappedBuffer(new byte[] {1}));
    channel.runPendingTasks();

    assertThat(channel.outboundMessages()).hasSize(1);
    channel.finishAndReleaseAll();
  }

  @Test
  void runsTheCustomizerItWraps() {
    List<Channel> seen = new ArrayList<>();
    NettyCustomizer next =
        new NettyCustomizer() {
          @Override
          public void afterChannelInitialized(Channel channel) {
            seen.add(channel);
          }
        };
    EmbeddedChannel channel = new EmbeddedChannel();
    LettuceTransport.consolidatingFlushes(next).afterChannelInitialized(channel);

    assertThat(seen).containsExactly(channel);
    assertThat(channel.pipeline().first()).isInstanceOf(FlushConsolidationHandler.class);
    channel.finishAndReleaseAll();
  }

  @Test
  void theDefaultTransportConsolidatesFlushes() {
    LettuceTransport transport = new LettuceTransport();
    try {
      EmbeddedChannel channel = new EmbeddedChannel();
      transport.resources().nettyCustomizer().afterChannelInitialized(channel);
      assertThat(channel.pipeline().first()).isInstanceOf(FlushConsolidationHandler.class);
      channel.finishAndReleaseAll();
    } finally {
      transport.close();
    }
  }
}
