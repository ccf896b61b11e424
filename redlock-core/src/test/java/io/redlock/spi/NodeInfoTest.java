package io.redlock.spi;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The server version read from {@code INFO server}, as each server writes it. */
class NodeInfoTest {

  @Test
  void redisIsNamedByItsRedisVersion() {
    String info =
        "# Server\r\n"
            + "redis_version:6.2.11\r\n"
            + "redis_git_sha1:00000000\r\n"
            + "redis_mode:standalone\r\n"
            + "run_id:5ab6a2f2f1c1e0f9f1d8a4f9b0f0c6f0e2d5a7b1\r\n";
    assertThat(NodeInfo.serverVersion(info)).isEqualTo("6.2.11");
  }

  @Test
  void valkeyIsNamedByItsOwnVersionNotTheRedisVersionItReportsBesideIt() {
    // the first lines of INFO server of valkey-server 8.0.1 (Debian bookworm-backports)
    String info =
        "# Server\r\n"
            + "redis_version:7.2.4\r\n"
            + "server_name:valkey\r\n"
            + "valkey_version:8.0.1\r\n"
            + "redis_git_sha1:00000000\r\n"
            + "server_mode:standalone\r\n";
    assertThat(NodeInfo.serverVersion(info)).isEqualTo("valkey 8.0.1");
  }

  @Test
  void aServerThatNamesItselfButGivesNoOwnVersionIsNamedByItsRedisVersion() {
    assertThat(NodeInfo.serverVersion("redis_version:7.4.0\nserver_name:redis\n"))
        .isEqualTo("7.4.0");
    assertThat(NodeInfo.serverVersion("redis_version:7.2.4\nserver_name:other\n"))
        .isEqualTo("7.2.4");
  }

  @Test
  void noVersionIsNull() {
    assertThat(NodeInfo.serverVersion(null)).isNull();
    assertThat(NodeInfo.serverVersion("# Server\r\nrun_id:abc\r\n")).isNull();
  }
}
