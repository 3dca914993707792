package io.datum.cdc.testkit.example;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.testkit.CheckpointStoreConformanceKit;
import io.datum.cdc.testkit.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.file.Path;
import java.sql.SQLException;

/** The README's example: the conformance kit run against a store kept in a PostgreSQL table. */
@EmbeddedPostgresTest
class PgTableCheckpointStoreConformanceTest extends CheckpointStoreConformanceKit {
  private final EmbeddedPostgresServer pg;

  PgTableCheckpointStoreConformanceTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Override
  protected CdcCheckpointStore open(Path directory) {
    try { // one table per test directory
      return new PgTableCheckpointStore(pg.jdbcUrl(), "checkpoints_" + Integer.toHexString(directory.hashCode()));
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  protected String uri(Path directory) {
    return null; // not opened by URI in a child JVM: the kit skips reopen, crash and corruption tests
  }
}
