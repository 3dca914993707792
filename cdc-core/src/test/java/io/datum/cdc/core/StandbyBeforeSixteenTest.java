package io.datum.cdc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.store.file.FileCheckpointStore;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A source pointed at a hot standby of PostgreSQL 14 or 15, which cannot decode on a standby: the
 * start fails at once naming the version and what to do, and creates nothing.
 */
@EmbeddedPostgresVersions({14, 15})
@EmbeddedPostgresTest
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class StandbyBeforeSixteenTest {

  private final EmbeddedPostgresServer primary;

  StandbyBeforeSixteenTest(EmbeddedPostgresServer primary) {
    this.primary = primary;
  }

  @Test
  void aStandbyBeforeSixteenIsRefusedNamingTheVersion(@TempDir Path dir) throws Exception {
    primary.execute(
        "CREATE TABLE old_t (id int PRIMARY KEY)", "CREATE PUBLICATION old_p FOR TABLE old_t");
    try (EmbeddedPostgresServer standby = primary.createStandby("sb_old");
        FileCheckpointStore store = FileCheckpointStore.open(dir);
        PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(standby.jdbcUrl())
                .primaryJdbcUrl(primary.jdbcUrl())
                .user(primary.user())
                .slot("old_slot")
                .publication("old_p")
                .createSlot(true)
                .checkpointStore(store)
                .build()) {
      CdcConfigurationException e =
          assertThrows(
              CdcConfigurationException.class, () -> source.start(new EventCollector(true)));
      assertTrue(
          e.getMessage().contains("hot standby running PostgreSQL " + primary.majorVersion()),
          e.getMessage());
      assertTrue(e.getMessage().contains("needs PostgreSQL 16 or later"), e.getMessage());
      assertEquals("0", standby.queryString("SELECT count(*) FROM pg_replication_slots"));
    }
  }
}
