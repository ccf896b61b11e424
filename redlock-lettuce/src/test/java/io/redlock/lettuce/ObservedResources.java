package io.redlock.lettuce;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import java.util.function.Consumer;

/** Client resources as the transport builds its own, which show a test every channel opened. */
final class ObservedResources {
  private ObservedResources() {}

  /** Resources with consolidated flushes that pass each new channel to {@code channels}. */
  static ClientResources seeing(Consumer<Channel> channels) {
    return DefaultClientResources.builder()
        .nettyCustomizer(
            LettuceTransport.consolidatingFlushes(
                new NettyCustomizer() {
                  @Override
                  public void afterChannelInitialized(Channel channel) {
                    channels.accept(channel);
                  }
                }))
        .build();
  }
}
