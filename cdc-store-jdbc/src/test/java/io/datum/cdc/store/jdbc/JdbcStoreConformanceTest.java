package io.datum.cdc.store.jdbc;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.CheckpointStoreConformanceKit;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.file.Path;
import java.sql.SQLException;

/**
 * The {@code jdbc:} store against the conformance kit, on embedded PostgreSQL, opened by URI (as
 * the kit's child JVMs do) so the provider is exercised too. Each test's directory names its table
 * (by hash) and rides along in the URL as {@code ApplicationName}, so that {@link
 * CdcCheckpointStore#location()} names the directory as the kit requires of stores with a URI.
 */
@EmbeddedPostgresTest
class JdbcStoreConformanceTest extends CheckpointStoreConformanceKit {

  private final EmbeddedPostgresServer pg;

  JdbcStoreConformanceTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Override
  protected CdcCheckpointStore open(Path directory) {
    return CheckpointStores.open(uri(directory));
  }

  @Override
  protected String uri(Path directory) {
    return pg.jdbcUrl() + "&ApplicationName=" + directory + "#table=" + table(directory);
  }

  @Override
  protected void corrupt(Path directory) {
    try {
      pg.execute(
          "UPDATE "
              + table(directory)
              + " SET checkpoint = overlay(checkpoint placing '\\x5a5a' from 8)");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  static String table(Path directory) {
    return "checkpoints_" + Integer.toHexString(directory.toString().hashCode());
  }
}
