package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.spi.NodeInfo;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading the probe's INFO replies, with sections as Redis 6.2 and Valkey 8.0 send them. */
class InfoRepliesTest {
  private static final String REDIS_62_PERSISTENCE =
      "# Persistence\r\nloading:0\r\naof_enabled:0\r\naof_rewrite_in_progress:0\r\n"
          + "aof_rewrite_scheduled:0\r\naof_last_rewrite_time_sec:-1\r\n"
          + "aof_last_write_status:ok\r\n";

  private static final String VALKEY_80_PERSISTENCE =
      "# Persistence\r\nloading:0\r\naof_enabled:1\r\naof_rewrite_in_progress:0\r\n"
          + "aof_rewrite_scheduled:0\r\naof_last_rewrite_time_sec:-1\r\naof_rewrites:0\r\n"
          + "aof_rewrites_consecutive_failures:0\r\naof_last_write_status:ok\r\n";

  @Test
  void readsAFieldByItsWholeName() {
    String server = "# Server\r\nredis_version:6.2.11\r\nrun_id:440bb544\r\nrun_id_x:no\r\n";
    assertThat(InfoReplies.field(server, "run_id")).isEqualTo("440bb544");
    assertThat(InfoReplies.field(server, "redis_version")).isEqualTo("6.2.11");
  }

  @Test
  void aMissingRequiredFieldFailsWithItsName() {
    assertThatThrownBy(() -> InfoReplies.field("# Server\r\nredis_version:6.2.11\r\n", "run_id"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("run_id");
  }

  @Test
  void memoryLimitAndPolicy() {
    assertThat(
            InfoReplies.memory(
                "# Memory\r\nmaxmemory:104857600\r\nmaxmemory_policy:allkeys-lru\r\n"))
        .isEqualTo(new NodeInfo.Memory(104857600, "allkeys-lru"));
    assertThat(InfoReplies.memory("# Memory\r\nmaxmemory:0\r\n")).isNull(); // no policy shown
    assertThat(InfoReplies.memory("# Memory\r\nmaxmemory:lots\r\nmaxmemory_policy:noeviction\r\n"))
        .isNull();
    assertThat(InfoReplies.memory(null)).isNull(); // refused
  }

  @Test
  void evictedKeysOrMinusOneWhenNotKnown() {
    assertThat(InfoReplies.evictedKeys("# Stats\r\nexpired_keys:3\r\nevicted_keys:17\r\n"))
        .isEqualTo(17);
    assertThat(InfoReplies.evictedKeys("# Stats\r\nexpired_keys:3\r\n")).isEqualTo(-1);
    assertThat(InfoReplies.evictedKeys(null)).isEqualTo(-1);
  }

  @Test
  void persistenceOnRedis62AndValkey80() {
    assertThat(InfoReplies.persistence(REDIS_62_PERSISTENCE, Map.of("appendfsync", "everysec")))
        .isEqualTo(new NodeInfo.Persistence(false, "everysec", false, true));
    assertThat(InfoReplies.persistence(VALKEY_80_PERSISTENCE, Map.of("appendfsync", "always")))
        .isEqualTo(new NodeInfo.Persistence(true, "always", false, true));
  }

  @Test
  void aRewriteIsSeenByEachOfItsSigns() {
    Map<String, String> fsync = Map.of("appendfsync", "always");
    for (String sign :
        new String[] {
          "aof_rewrites:0\r\n", "aof_rewrite_in_progress:0\r\n",
          "aof_rewrite_scheduled:0\r\n", "aof_last_rewrite_time_sec:-1\r\n"
        }) {
      String changed =
          VALKEY_80_PERSISTENCE.replace(sign, sign.replace(":0", ":1").replace(":-1", ":0"));
      assertThat(InfoReplies.persistence(changed, fsync).rewrittenSinceStart()).as(sign).isTrue();
    }
  }

  @Test
  void persistenceNotKnownWithoutFsyncOrAField() {
    assertThat(InfoReplies.persistence(REDIS_62_PERSISTENCE, null)).isNull(); // CONFIG refused
    assertThat(InfoReplies.persistence(REDIS_62_PERSISTENCE, Map.of())).isNull();
    assertThat(
            InfoReplies.persistence(
                REDIS_62_PERSISTENCE.replace("aof_last_write_status:ok\r\n", ""),
                Map.of("appendfsync", "everysec")))
        .isNull();
    assertThat(InfoReplies.persistence(null, Map.of("appendfsync", "everysec"))).isNull();
  }
}
