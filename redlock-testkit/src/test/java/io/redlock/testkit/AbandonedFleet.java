package io.redlock.testkit;

/**
 * A child-JVM program for {@link ShutdownHookIT}: starts servers, reports them, and exits
 * without closing the fleet, as a test that blows up would.
 */
public final class AbandonedFleet {

  private AbandonedFleet() {}

  public static void main(String[] args) {
    @SuppressWarnings("resource") // abandoned on purpose: the shutdown hook must clean up
    RedisServers redis = RedisServers.start(2);
    redis.pause(1); // a stopped process must be killed too
    for (int i = 0; i < redis.size(); i++) {
      System.out.println("SERVER " + redis.pid(i) + " " + redis.dir(i));
    }
    System.out.flush();
    System.exit(0);
  }
}
