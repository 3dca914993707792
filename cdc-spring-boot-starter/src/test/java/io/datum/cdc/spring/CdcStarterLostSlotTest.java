package io.datum.cdc.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;

/** The health indicator on a slot whose WAL the server removed (wal_status lost). */
@EmbeddedPostgresTest(
    settings = {"max_slot_wal_keep_size=1MB", "max_wal_size=32MB", "min_wal_size=32MB"})
class CdcStarterLostSlotTest {

  private final EmbeddedPostgresServer pg;

  CdcStarterLostSlotTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void aLostSlotIsDownWhateverTheSourcesState() throws Exception {
    pg.execute(
        "CREATE TABLE spring_churn (id int, filler text)",
        "SELECT pg_create_logical_replication_slot('spring_lost', 'pgoutput')");
    PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .password(pg.password())
            .slot("spring_lost")
            .publication("spring_lost")
            .checkpointStore(new MemoryCheckpointStore())
            .build();
    CdcProperties properties = new CdcProperties();
    PgCdcSourceHealthIndicator indicator =
        new PgCdcSourceHealthIndicator(
            new PgCdcSourceLifecycle(source, (event, checkpoints) -> {}, properties),
            properties.getHealth());
    Health before = indicator.health();
    assertThat(before.getStatus()).as("not started").isEqualTo(Status.UNKNOWN);
    assertThat(before.getDetails())
        .containsEntry("walStatus", "reserved")
        .containsEntry("slotActive", false);
    // far more WAL than the slot may keep, then checkpoints, which invalidate it
    for (int i = 0; i < 4; i++) {
      pg.execute(
          "INSERT INTO spring_churn SELECT g, repeat('x', 500) FROM generate_series(1, 20000) g",
          "SELECT pg_switch_wal()",
          "CHECKPOINT");
    }
    properties.getHealth().setLagCacheTime(java.time.Duration.ZERO);
    Health after = indicator.health();
    assertThat(after.getDetails()).containsEntry("walStatus", "lost");
    assertThat(after.getStatus()).isEqualTo(Status.DOWN);
    pg.execute("SELECT pg_drop_replication_slot('spring_lost')");
  }
}
