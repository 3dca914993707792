package io.datum.cdc.testkit.example;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.CheckpointStoreConformanceKit;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.file.Path;

/** The README's example: the conformance kit run against a store kept in a PostgreSQL table. */
@EmbeddedPostgresTest
class PgTableCheckpointStoreConformanceTest extends CheckpointStoreConformanceKit {
  private final EmbeddedPostgresServer pg;

  PgTableCheckpointStoreConformanceTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Override
  protected CdcCheckpointStore open(Path directory) {
    // one table per directory: the same directory again reopens the same table
    return new PgTableCheckpointStore(
        pg.jdbcUrl(), "checkpoints_" + Integer.toHexString(directory.hashCode()));
  }

  @Override
  protected String uri(Path directory) {
    return null; // not opened by URI in a child JVM: the kit skips reopen, crash and corruption
    // tests
  }
}
